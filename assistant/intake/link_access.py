"""Whether the person who linked a Slack message may see it, as Slack decides for its own
link previews: a linked message is shown only to people who can read its conversation.

The bot reads linked messages with its own token, which reaches every conversation the bot is
in: other people's DMs with it, private channels and group DMs the poster is not in. So before
anything of a linked message is read (`assistant.intake.references`), it asks here:

- the conversation the link was posted in: readable (the poster is writing in it);
- a public channel of the same workspace: readable;
- a private channel, a DM, a group DM: readable only if the poster is a member;
- another workspace: not read.

The same rule decides whose feedback clicks count (`may_see`): a click is a vote only from
someone who can read the conversation the answer is in.

The answers come from Slack (`auth.test`, `conversations.info`, `conversations.members`) and
are kept briefly. A Slack error or an unreachable Slack raises (`SlackApiError`,
`aiohttp.ClientError`, `TimeoutError`): the caller then reads nothing (fail closed).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from cachetools import TTLCache
from slack_sdk.web.async_client import AsyncWebClient

# Membership and a conversation's kind can change (people leave, channels go private): an
# answer is trusted this long.
ANSWER_SECONDS = 60.0
# A workspace's address changes only when an admin renames it.
WORKSPACE_SECONDS = 3600.0
CACHE_SIZE = 10_000  # answers kept per cache: memory stays bounded however many people link
MEMBERS_PAGE = 999  # conversations.members wants a limit under 1000: fewer calls per check

OTHER_WORKSPACE = "(The linked message is in another workspace, so it was not read.)"


def not_visible(user: str) -> str:
    return f"(The linked message is in a conversation <@{user}> may not see, so it was not read.)"


@dataclass(frozen=True)
class Poster:
    """Who posted the links, and where."""

    team: str  # the workspace the event came from
    channel: str
    user: str


@dataclass(frozen=True)
class Conversation:
    public: bool  # a public channel: every member of its workspaces can read it
    teams: frozenset[str]  # the workspaces it belongs to (empty: Slack did not say)


@dataclass(frozen=True)
class Workspace:
    team_id: str
    host: str  # e.g. acme.slack.com


class LinkAccess:
    """The permission check, with its caches. One per app (the caches are shared by all
    events, on one event loop)."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        answer_seconds: float = ANSWER_SECONDS,
        size: int = CACHE_SIZE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self._workspaces: TTLCache[str, Workspace] = TTLCache(100, WORKSPACE_SECONDS, clock)
        self._conversations: TTLCache[str, Conversation] = TTLCache(size, answer_seconds, clock)
        self._members: TTLCache[tuple[str, str], bool] = TTLCache(size, answer_seconds, clock)

    async def refusal(self, poster: Poster, channel: str, host: str) -> str | None:
        """None when `poster` may read conversation `channel` (linked through `host`), else
        the note to write instead of the message."""
        if channel == poster.channel:
            return None  # channel ids are unique across Slack: the very conversation
        if not await self._our_host(poster.team, host):
            return OTHER_WORKSPACE
        conversation = await self._conversation(channel)
        # The host is only what the link says (anyone can type one): the conversation's own
        # workspaces decide.
        if not _of_workspace(conversation, poster.team):
            return OTHER_WORKSPACE
        if await self._readable(conversation, poster.user, channel):
            return None
        return not_visible(poster.user)

    async def may_see(self, team: str, user: str, channel: str) -> bool:
        """Whether `user`, acting in workspace `team`, can read conversation `channel` by the
        same rule (a public channel of that workspace, or one they are a member of): e.g.
        whether a click on a message there can be theirs to make (`assistant.panel.feedback`).
        Raises as `refusal` does when Slack cannot say."""
        conversation = await self._conversation(channel)
        return _of_workspace(conversation, team) and await self._readable(
            conversation, user, channel
        )

    async def _readable(self, conversation: Conversation, user: str, channel: str) -> bool:
        return conversation.public or await self._is_member(user, channel)

    async def _our_host(self, team: str, host: str) -> bool:
        """Whether a link's host can name a conversation of `team`: the workspace's own
        address (auth.test's `url`), or an Enterprise Grid organisation's address
        (`acme.enterprise.slack.com`), which names no workspace: for those only the
        conversation's workspaces (checked next) tell. Any other host is another workspace,
        refused without asking Slack about its conversation."""
        host = host.lower()
        if host.endswith(".enterprise.slack.com"):
            return True
        workspace = self._workspaces.get(team)
        if workspace is None:
            answer = await self.client.auth_test()
            workspace = Workspace(answer.get("team_id") or "", _host_of(answer.get("url")))
            self._workspaces[team] = workspace
        return workspace.team_id == team and workspace.host == host

    async def _conversation(self, channel: str) -> Conversation:
        known = self._conversations.get(channel)
        if known is None:
            answer = await self.client.conversations_info(channel=channel)
            known = _described(answer.get("channel") or {})
            self._conversations[channel] = known
        return known

    async def _is_member(self, user: str, channel: str) -> bool:
        known = self._members.get((user, channel))
        if known is None:
            known = False
            first = await self.client.conversations_members(channel=channel, limit=MEMBERS_PAGE)
            async for page in first:  # slack-sdk follows response_metadata.next_cursor
                if user in (page.get("members") or []):
                    known = True
                    break
            self._members[user, channel] = known
        return known


def _of_workspace(conversation: Conversation, team: str) -> bool:
    # A Slack Connect channel lists every workspace it is shared with; a conversation whose
    # workspaces Slack does not name is left to membership.
    return not conversation.teams or team in conversation.teams


def _described(channel: dict[str, Any]) -> Conversation:
    # Public only when Slack says all of it: anything else (a private channel, old-style
    # `is_group` private channels, DMs, group DMs, or fields missing) needs membership.
    public = (
        channel.get("is_channel") is True
        and channel.get("is_private") is False
        and not channel.get("is_im")
        and not channel.get("is_mpim")
        and not channel.get("is_group")
    )
    teams = frozenset(
        t for t in (channel.get("context_team_id"), *(channel.get("shared_team_ids") or [])) if t
    )
    # A channel whose workspace Slack does not name is not taken as ours: membership decides.
    return Conversation(public and bool(teams), teams)


def _host_of(url: Any) -> str:
    return (urlsplit(url).hostname or "") if isinstance(url, str) else ""
