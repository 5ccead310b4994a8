"""Conversations as the fake Slack knows them: kind, workspace and members, behind
`conversations.info`, `conversations.members` and `users.conversations`.

Tests declare them through `FakeSlack.conversations`: `public`, `private`, `im`, `mpim`.
Like Slack, a private channel, DM or group DM the bot is not in answers `channel_not_found`,
and so does a conversation never declared (messages need no declaration: `SlackStore` keeps
them by channel id). Answers follow Slack's conversation object; `conversations.members` pages
with `limit` and an opaque `cursor` (`response_metadata.next_cursor`, empty on the last page).
`users.conversations` lists a person's conversations of the asked `types` (default
`public_channel`), paged the same way (`limit` at most 999); as for Slack's bot tokens, a
private one only when the bot is in it too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from assistant.fakes.slack.params import Handler
from assistant.fakes.slack.store import SlackError, decode_cursor, encode_cursor

Kind = Literal["public", "private", "im", "mpim"]
CREATED = 1_700_000_000


@dataclass
class Conversation:
    id: str
    kind: Kind
    name: str
    team: str
    members: list[str]  # the bot among them when it is in the conversation
    user: str | None = None  # a DM's other person

    def render(self, bot_user_id: str) -> dict[str, Any]:
        """The conversation object of `conversations.info`."""
        base: dict[str, Any] = {
            "id": self.id,
            "created": CREATED,
            "is_archived": False,
            "is_org_shared": False,
            "context_team_id": self.team,
            "updated": CREATED * 1000,
        }
        if self.kind == "im":
            return {
                **base,
                "is_im": True,
                "user": self.user,
                "is_user_deleted": False,
                "priority": 0,
            }
        creator = next((m for m in self.members if m != bot_user_id), bot_user_id)
        return {
            **base,
            "name": self.name,
            "is_channel": self.kind != "mpim",
            "is_group": False,
            "is_im": False,
            "is_mpim": self.kind == "mpim",
            "is_private": self.kind != "public",
            "is_general": False,
            "unlinked": 0,
            "name_normalized": self.name,
            "is_shared": False,
            "is_ext_shared": False,
            "is_pending_ext_shared": False,
            "pending_shared": [],
            "parent_conversation": None,
            "creator": creator,
            "shared_team_ids": [self.team],
            "pending_connected_team_ids": [],
            "is_member": bot_user_id in self.members,
            "topic": {"value": "", "creator": "", "last_set": 0},
            "purpose": {"value": "", "creator": "", "last_set": 0},
            "previous_names": [],
        }


class Conversations:
    """The declared conversations. Declaring takes the server's lock (reentrant: the
    handlers run under it already)."""

    def __init__(self, lock: threading.Condition, team_id: str, bot_user_id: str) -> None:
        self._lock = lock
        self.team_id = team_id
        self.bot_user_id = bot_user_id
        self._known: dict[str, Conversation] = {}

    # -- declaring -----------------------------------------------------------------------------

    def public(
        self,
        channel: str,
        members: Iterable[str] = (),
        *,
        name: str | None = None,
        bot: bool = True,
        team: str | None = None,
    ) -> dict[str, Any]:
        """A public channel; `bot`: whether the bot is in it."""
        return self._add(channel, "public", members, name, bot, team)

    def private(
        self,
        channel: str,
        members: Iterable[str] = (),
        *,
        name: str | None = None,
        bot: bool = True,
        team: str | None = None,
    ) -> dict[str, Any]:
        """A private channel; `bot`: whether the bot is in it."""
        return self._add(channel, "private", members, name, bot, team)

    def im(self, channel: str, user: str, *, team: str | None = None) -> dict[str, Any]:
        """The bot's DM with `user`."""
        return self._add(channel, "im", [user], None, True, team, user=user)

    def mpim(
        self, channel: str, members: Iterable[str], *, bot: bool = True, team: str | None = None
    ) -> dict[str, Any]:
        """A group DM of `members` (and the bot, unless `bot` is false)."""
        people = list(members)
        name = "mpdm-" + "--".join(m.lower() for m in people) + "-1"
        return self._add(channel, "mpim", people, name, bot, team)

    def _add(
        self,
        channel: str,
        kind: Kind,
        members: Iterable[str],
        name: str | None,
        bot: bool,
        team: str | None,
        user: str | None = None,
    ) -> dict[str, Any]:
        people = list(dict.fromkeys(members))
        if bot and self.bot_user_id not in people:
            people.append(self.bot_user_id)
        conversation = Conversation(
            channel, kind, name or channel.lower(), team or self.team_id, people, user
        )
        with self._lock:
            self._known[channel] = conversation
            return conversation.render(self.bot_user_id)

    def team_of(self, channel: str) -> str | None:
        """The workspace of a declared conversation; None for one not declared."""
        found = self._known.get(channel)
        return found.team if found is not None else None

    def seen_by(self, user: str, team: str, kinds: Iterable[Kind]) -> list[Conversation]:
        """The conversations of `kinds` in `team` whose messages `user` may read: every
        public channel of the workspace, and the others they are a member of."""
        wanted = set(kinds)
        return [
            c
            for c in self._known.values()
            if c.team == team and c.kind in wanted and (c.kind == "public" or user in c.members)
        ]

    # -- Web API -------------------------------------------------------------------------------

    def methods(self) -> dict[str, Handler]:
        return {
            "conversations.info": self._info,
            "conversations.members": self._members,
            "users.conversations": self._user_conversations,
        }

    def _visible(self, params: dict[str, Any]) -> Conversation:
        conversation = self._known.get(params.get("channel") or "")
        if conversation is None:
            raise SlackError("channel_not_found")
        if conversation.kind != "public" and self.bot_user_id not in conversation.members:
            raise SlackError("channel_not_found")  # Slack does not say it exists
        return conversation

    def _info(self, params: dict[str, Any]) -> dict[str, Any]:
        conversation = self._visible(params)
        channel = conversation.render(self.bot_user_id)
        if str(params.get("include_num_members", "")).lower() in ("1", "true"):
            channel["num_members"] = len(conversation.members)
        return {"ok": True, "channel": channel}

    def _members(self, params: dict[str, Any]) -> dict[str, Any]:
        members = self._visible(params).members
        limit = _limit(params, 1000)
        start = 0
        if params.get("cursor"):
            user = decode_cursor(params["cursor"], "user")
            if user not in members:
                raise SlackError("invalid_cursor")
            start = members.index(user)
        rest = members[start + limit :]
        return {
            "ok": True,
            "members": members[start : start + limit],
            "response_metadata": {"next_cursor": encode_cursor(rest[0], "user") if rest else ""},
        }

    def _user_conversations(self, params: dict[str, Any]) -> dict[str, Any]:
        user = params.get("user") or self.bot_user_id
        kinds = {
            TYPES.get(t.strip()) for t in str(params.get("types") or "public_channel").split(",")
        }
        if None in kinds:
            raise SlackError("invalid_types")
        limit = _limit(params, 999)
        mine = [
            c
            for c in self._known.values()
            if c.kind in kinds
            and user in c.members
            and (c.kind == "public" or self.bot_user_id in c.members)
        ]
        start = 0
        if params.get("cursor"):
            after = decode_cursor(params["cursor"], "channel")
            start = next((n for n, c in enumerate(mine) if c.id == after), -1)
            if start < 0:
                raise SlackError("invalid_cursor")
        page, rest = mine[start : start + limit], mine[start + limit :]
        return {
            "ok": True,
            # Slack leaves out is_member here (conversations.info tells it).
            "channels": [_listed(c.render(self.bot_user_id)) for c in page],
            "response_metadata": {
                "next_cursor": encode_cursor(rest[0].id, "channel") if rest else ""
            },
        }


# Slack's conversation types (`types`, `channel_types`) and the kinds they name.
TYPES: dict[str, Kind] = {
    "public_channel": "public",
    "private_channel": "private",
    "im": "im",
    "mpim": "mpim",
}


def _limit(params: dict[str, Any], most: int) -> int:
    try:
        limit = int(params.get("limit") or 100)
    except ValueError as exc:
        raise SlackError("invalid_limit") from exc
    if not 1 <= limit <= most:
        raise SlackError("invalid_limit")
    return limit


def _listed(channel: dict[str, Any]) -> dict[str, Any]:
    channel.pop("is_member", None)
    return channel
