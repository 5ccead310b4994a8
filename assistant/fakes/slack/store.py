"""In-memory channels, threads, users and reactions behind the fake Slack Web API.

Pure data, no HTTP and no locking (the server holds its lock around every call). Message
dicts follow the shapes `conversations.replies` returns: a thread parent carries `thread_ts`,
`reply_count`, `reply_users`, `latest_reply`; a reply carries `thread_ts` and `parent_user_id`.
"""

from __future__ import annotations

import base64
import binascii
import copy
from dataclasses import dataclass, field
from typing import Any

from assistant.fakes import ids


class SlackError(Exception):
    """An `{"ok": false, "error": code}` answer; with `messages`, Slack's details of what was
    wrong (`response_metadata.messages`, as for `invalid_arguments`)."""

    def __init__(self, code: str, messages: list[str] | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.messages = messages or []

    def body(self) -> dict[str, Any]:
        answer: dict[str, Any] = {"ok": False, "error": self.code}
        if self.messages:
            answer["response_metadata"] = {"messages": self.messages}
        return answer


def ts_key(ts: str) -> tuple[int, int]:
    # Compare as (seconds, micros): float() would lose precision on 16-digit timestamps.
    seconds, _, micros = ts.partition(".")
    return int(seconds), int(micros or 0)


def encode_cursor(value: str, kind: str = "next_ts") -> str:
    # Real Slack cursors are base64 of "<kind>:<value>" ("next_ts:<ts>" for messages,
    # "user:<id>" for members); clients must treat them as opaque.
    return base64.b64encode(f"{kind}:{value}".encode()).decode()


def decode_cursor(cursor: str, kind: str = "next_ts") -> str:
    try:
        found, _, value = base64.b64decode(cursor, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise SlackError("invalid_cursor") from exc
    if found != kind or not value:
        raise SlackError("invalid_cursor")
    return value


@dataclass
class SlackStore:
    team_id: str = ids.TEAM_ID
    bot_user_id: str = ids.BOT_USER_ID
    messages: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    # (channel, ts) -> reaction names the bot added, in order.
    reactions: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    # -- messages ------------------------------------------------------------------------------

    def add(self, channel: str, message: dict[str, Any]) -> dict[str, Any]:
        ts = message["ts"]
        ids.clock.observe(ts)
        stored = {"type": "message", **message}
        if stored.get("thread_ts") == ts:
            del stored["thread_ts"]  # a parent's thread_ts is derived from its replies
        self.messages.setdefault(channel, {})[ts] = stored
        return self.render(channel, stored)

    def get(self, channel: str, ts: str) -> dict[str, Any] | None:
        return self.messages.get(channel, {}).get(ts)

    def thread(self, channel: str, ts: str) -> list[dict[str, Any]]:
        """The thread containing `ts`, parent first, replies oldest first, rendered."""
        if channel not in self.messages:
            raise SlackError("channel_not_found")
        message = self.get(channel, ts)
        if message is None:
            raise SlackError("thread_not_found")
        root_ts = message.get("thread_ts", ts)
        root = self.get(channel, root_ts)
        if root is None:
            raise SlackError("thread_not_found")
        replies = sorted(
            (m for m in self.messages[channel].values() if m.get("thread_ts") == root_ts),
            key=lambda m: ts_key(m["ts"]),
        )
        return [self.render(channel, m) for m in [root, *replies]]

    def replies_page(
        self,
        channel: str,
        ts: str,
        *,
        limit: int,
        cursor: str | None,
        oldest: str | None,
        latest: str | None,
        inclusive: bool,
    ) -> dict[str, Any]:
        """One page of `conversations.replies`: like Slack, the parent leads every page."""
        parent, *replies = self.thread(channel, ts)
        replies = [r for r in replies if _in_range(r["ts"], oldest, latest, inclusive)]
        if cursor:
            start_ts = decode_cursor(cursor)
            start = next(
                (i for i, r in enumerate(replies) if ts_key(r["ts"]) >= ts_key(start_ts)),
                len(replies),
            )
            page = replies[start : start + limit]
            rest = replies[start + limit :]
            messages = [parent, *page]
        else:
            # The first page counts the parent against `limit`.
            page = replies[: max(limit - 1, 0)]
            rest = replies[len(page) :]
            messages = [parent, *page][:limit]
        response: dict[str, Any] = {"ok": True, "messages": messages, "has_more": bool(rest)}
        if rest:
            response["response_metadata"] = {"next_cursor": encode_cursor(rest[0]["ts"])}
        return response

    def history_page(
        self,
        channel: str,
        *,
        limit: int,
        oldest: str | None,
        latest: str | None,
        inclusive: bool,
    ) -> dict[str, Any]:
        """`conversations.history`: the channel's top-level messages, newest first (one page;
        the app asks for single messages)."""
        if channel not in self.messages:
            raise SlackError("channel_not_found")
        top = [
            m
            for m in self.messages[channel].values()
            if m.get("thread_ts", m["ts"]) == m["ts"]
            and _in_range(m["ts"], oldest, latest, inclusive)
        ]
        top.sort(key=lambda m: ts_key(m["ts"]), reverse=True)
        return {
            "ok": True,
            "messages": [self.render(channel, m) for m in top[:limit]],
            "has_more": len(top) > limit,
        }

    def render(self, channel: str, message: dict[str, Any]) -> dict[str, Any]:
        """A copy with the fields Slack derives: thread summary, parent author, reactions."""
        out = copy.deepcopy(message)
        ts = out["ts"]
        thread_ts = out.get("thread_ts")
        if thread_ts and thread_ts != ts:
            parent = self.get(channel, thread_ts)
            if parent is not None and "parent_user_id" not in out and parent.get("user"):
                out["parent_user_id"] = parent["user"]
        else:
            replies = [
                m for m in self.messages.get(channel, {}).values() if m.get("thread_ts") == ts
            ]
            if replies:
                users = list(dict.fromkeys(m.get("user", "") for m in replies if m.get("user")))
                out.update(
                    thread_ts=ts,
                    reply_count=len(replies),
                    reply_users_count=len(users),
                    latest_reply=max((m["ts"] for m in replies), key=ts_key),
                    reply_users=users,
                    is_locked=False,
                    subscribed=False,
                )
        names = self.reactions.get((channel, ts))
        if names:
            out["reactions"] = [
                {"name": name, "users": [self.bot_user_id], "count": 1} for name in names
            ]
        return out

    # -- reactions -----------------------------------------------------------------------------

    def add_reaction(self, channel: str, ts: str, name: str) -> None:
        names = self.reactions.setdefault((channel, ts), [])
        if name in names:
            raise SlackError("already_reacted")
        names.append(name)

    def remove_reaction(self, channel: str, ts: str, name: str) -> None:
        names = self.reactions.get((channel, ts), [])
        if name not in names:
            raise SlackError("no_reaction")
        names.remove(name)

    # -- users ---------------------------------------------------------------------------------

    def add_user(
        self,
        user_id: str,
        name: str,
        *,
        real_name: str | None = None,
        display_name: str = "",
        is_bot: bool = False,
        tz: str = "Europe/Berlin",
        tz_offset: int = 3600,
        locale: str = "en-US",
        **extra: Any,
    ) -> dict[str, Any]:
        real_name = real_name if real_name is not None else name.title()
        user = {
            "id": user_id,
            "team_id": self.team_id,
            "name": name,
            "deleted": False,
            "color": "9f69e7",
            "real_name": real_name,
            "tz": tz,
            "tz_label": "Central European Time",
            "tz_offset": tz_offset,
            "profile": {
                "real_name": real_name,
                "real_name_normalized": real_name,
                "display_name": display_name,
                "display_name_normalized": display_name,
                "image_48": f"https://avatars.example/{user_id}_48.png",
                "team": self.team_id,
            },
            "is_admin": False,
            "is_owner": False,
            "is_bot": is_bot,
            "is_app_user": False,
            "updated": 1_700_000_000,
            "locale": locale,  # answered only with include_locale (users.py)
            **extra,
        }
        self.users[user_id] = user
        return user


def _in_range(ts: str, oldest: str | None, latest: str | None, inclusive: bool) -> bool:
    key = ts_key(ts)
    if oldest is not None and (key < ts_key(oldest) or (key == ts_key(oldest) and not inclusive)):
        return False
    return latest is None or key < ts_key(latest) or (key == ts_key(latest) and inclusive)
