"""Whether a person's message is taken in its channel (README "Configuring channels"): not
at all in a channel where the bot is off; from a person who may not use it there, one short
ephemeral note instead (docs/log-format.md#refusals), and no run."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from cachetools import TTLCache
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.run.channel_rules import ChannelRules, Channels
from assistant.run.recorder import Recorder
from assistant.slack.connection import slack_reason
from context.channels import may_use
from context.storage import EntryMeta, ThreadKey

log = logging.getLogger(__name__)

NOTE = (
    "Sorry, I'm not available to you in this channel: its settings list who may use me. "
    "A workspace admin can change them in my App Home."
)
GROUPS_SECONDS = 60  # how long a user group's members are taken as Slack last listed them


def refusal_line(user: str) -> str:
    """The system entry of a refusal in a thread that has a log: once per person."""
    return f"<@{user}> may not use the assistant in this channel; they were told so privately."


@dataclass
class ChannelGate:
    channels: Channels
    client: AsyncWebClient
    recorder: Recorder
    # (team, group) → its members, as usergroups.users.list last gave them.
    _members: TTLCache[tuple[str, str], frozenset[str]] = field(
        default_factory=lambda: TTLCache(maxsize=1024, ttl=GROUPS_SECONDS)
    )

    async def admit(
        self, team: str, key: ThreadKey, user: str, event_id: str | None, threaded: bool
    ) -> ChannelRules | None:
        """The channel's rules when `user`'s message is to be taken; None when it is not
        (the bot is off there, or they may not use it: then they were told, once).
        `threaded`: the message is a reply in a thread (the note goes there too)."""
        rules = await self.channels.rules(team, key.channel)
        if not rules.enabled:
            return None  # quietly: the admins turned the bot off here
        if may_use(rules.access, rules.users, user, await self._in_groups(team, user, rules)):
            return rules
        await self._refuse(key, user, event_id, threaded)
        return None

    async def _in_groups(self, team: str, user: str, rules: ChannelRules) -> bool:
        if rules.access != "listed" or user in rules.users:
            return False  # not needed: no Slack call
        for group in rules.groups:
            members = self._members.get((team, group))
            if members is None:
                try:
                    response = await self.client.usergroups_users_list(
                        usergroup=group, team_id=team
                    )
                except SlackApiError as exc:
                    log.warning("cannot list user group %s: %s", group, slack_reason(exc))
                    continue  # its members are not admitted on its account
                members = frozenset(response.get("users") or ())
                self._members[(team, group)] = members
            if user in members:
                return True
        return False

    async def _refuse(
        self, key: ThreadKey, user: str, event_id: str | None, threaded: bool
    ) -> None:
        line = refusal_line(user)
        store = self.recorder.store
        if await self.recorder.read(store.has_thread, key):
            entries = await self.recorder.entries(key)
            if any(entry.content == line for entry in entries):
                return  # told already in this thread
        try:
            await self.client.chat_postEphemeral(
                channel=key.channel,
                user=user,
                text=NOTE,
                thread_ts=key.thread_ts if threaded else None,
            )
        except SlackApiError as exc:
            log.warning("cannot tell %s in %s: %s", user, key, slack_reason(exc))
            return
        if await self.recorder.read(store.has_thread, key):
            # Only in a thread the bot is in already: a refused mention starts no log.
            await self.recorder.record(key, line, meta=EntryMeta(event_id=event_id))
