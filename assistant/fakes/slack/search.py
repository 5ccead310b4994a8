"""Slack's Real-time Search API in the fake Slack: `assistant.search.context`
(docs.slack.dev/reference/methods/assistant.search.context, "Using the Real-time Search API").

A bot token searches on behalf of the person whose message gave the app an `action_token`
(Slack puts it in the message event, `event.assistant_thread.action_token`); tests hand one
out with `action_token(user)` and can `expire` it. The call answers what that person may
read and nothing more: the workspace's public channels, and the private channels, group DMs
and DMs they are a member of, of the `channel_types` asked (default `public_channel`).
Messages match by keyword (any word of the query, case-insensitive), best first; each result
carries Slack's fields, its permalink among them. At most `limit` (1 to 20, default 20) a page,
with `response_metadata.next_cursor` for the next.

A missing, unknown or expired `action_token` answers `invalid_action_token`; a missing
`query`, an unknown channel or content type or a `limit` out of range `invalid_arguments`.
Slack's other refusals (`feature_not_enabled` for a workspace without the feature, 429
`ratelimited` with `Retry-After`) are scripted with the fake's faults (`fail`, `rate_limit`).
"""

from __future__ import annotations

import itertools
import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

from assistant.fakes.slack.chat import permalink
from assistant.fakes.slack.conversations import TYPES, Conversations
from assistant.fakes.slack.params import Handler, flag
from assistant.fakes.slack.store import SlackError, SlackStore, decode_cursor, encode_cursor, ts_key

METHOD = "assistant.search.context"
MAX_LIMIT = 20
TOKEN_SECONDS = 600.0  # how long a token handed out is good for, unless a test says otherwise
_WORD = re.compile(r"\w{2,}")
_numbers = itertools.count(10_000_000_000_000)


@dataclass
class ActionToken:
    user: str
    team: str
    expires: float  # time.monotonic()


class RealTimeSearch:
    """The action tokens handed out, and the search; answers under the server's lock
    (reentrant: the handlers run under it already)."""

    def __init__(
        self,
        lock: threading.Condition,
        store: SlackStore,
        conversations: Conversations,
        team_id: str,
    ) -> None:
        self._lock = lock
        self._store = store
        self._conversations = conversations
        self._team_id = team_id
        self._tokens: dict[str, ActionToken] = {}

    # -- tokens --------------------------------------------------------------------------------

    def action_token(
        self, user: str, *, team: str | None = None, seconds: float = TOKEN_SECONDS
    ) -> str:
        """A new action token of `user`'s, as Slack puts in the event of their message."""
        token = f"{next(_numbers)}.{next(_numbers)}.{secrets.token_hex(16)}"
        with self._lock:
            expires = time.monotonic() + seconds
            self._tokens[token] = ActionToken(user, team or self._team_id, expires)
        return token

    def expire(self, token: str) -> None:
        with self._lock:
            self._tokens[token].expires = 0.0

    # -- Web API -------------------------------------------------------------------------------

    def methods(self) -> dict[str, Handler]:
        return {METHOD: self._context}

    def _context(self, params: dict[str, Any]) -> dict[str, Any]:
        found = self._tokens.get(str(params.get("action_token") or ""))
        if found is None or found.expires <= time.monotonic():
            raise SlackError("invalid_action_token")
        query = str(params.get("query") or "").strip()
        if not query:
            raise SlackError("invalid_arguments", ["[ERROR] missing required field: query"])
        kinds = [TYPES.get(t) for t in _listed(params.get("channel_types"), "public_channel")]
        contents = _listed(params.get("content_types"), "messages")
        if None in kinds or not set(contents) <= {"messages", "files", "channels", "users"}:
            raise SlackError("invalid_arguments", ["[ERROR] unknown channel or content type"])
        limit = _limit(params.get("limit"))
        words = {w.lower() for w in _WORD.findall(query)}
        matches: list[tuple[int, dict[str, Any]]] = []
        if "messages" in contents:
            seen = self._conversations.seen_by(found.user, found.team, filter(None, kinds))
            for conversation in seen:
                for message in self._store.messages.get(conversation.id, {}).values():
                    score = len(words & {w.lower() for w in _WORD.findall(message["text"])})
                    if score and _wanted(message, params):
                        matches.append(
                            (score, self._result(conversation.id, conversation.name, message))
                        )
        matches.sort(key=lambda m: (m[0], ts_key(m[1]["message_ts"])), reverse=True)
        start = int(decode_cursor(params["cursor"], "offset")) if params.get("cursor") else 0
        page = [result for _, result in matches[start : start + limit]]
        more = start + limit < len(matches)
        return {
            "ok": True,
            "results": {"messages": page},
            "response_metadata": {
                "next_cursor": encode_cursor(str(start + limit), "offset") if more else ""
            },
        }

    def _result(self, channel: str, name: str, message: dict[str, Any]) -> dict[str, Any]:
        author = message.get("user", "")
        person = self._store.users.get(author, {})
        return {
            "author_name": person.get("real_name", ""),
            "author_user_id": author,
            "team_id": self._team_id,
            "channel_id": channel,
            "channel_name": name,
            "message_ts": message["ts"],
            "content": message["text"],
            "is_author_bot": bool(message.get("bot_id")),
            "permalink": permalink(self._store, channel, message["ts"]),
        }


def _listed(value: Any, default: str) -> list[str]:
    return [part.strip() for part in str(value or default).split(",") if part.strip()]


def _limit(value: Any) -> int:
    try:
        limit = int(value or MAX_LIMIT)
    except ValueError:
        raise SlackError("invalid_arguments", ["[ERROR] limit must be a number"]) from None
    if not 1 <= limit <= MAX_LIMIT:
        raise SlackError("invalid_arguments", [f"[ERROR] limit must be 1 to {MAX_LIMIT}"])
    return limit


def _wanted(message: dict[str, Any], params: dict[str, Any]) -> bool:
    """Whether a matching message is within the call's other filters: bots' messages only
    with `include_bots`, and `after` / `before` (UNIX seconds)."""
    if message.get("bot_id") and not flag(params.get("include_bots")):
        return False
    seconds = ts_key(message["ts"])[0]
    try:
        after = int(params["after"]) if params.get("after") else None
        before = int(params["before"]) if params.get("before") else None
    except ValueError:
        raise SlackError("invalid_arguments", ["[ERROR] after and before are UNIX times"]) from None
    return (after is None or seconds > after) and (before is None or seconds < before)
