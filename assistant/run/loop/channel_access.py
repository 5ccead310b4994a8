"""Who may use the bot in a channel whose settings list them (docs/configuration.md, "Configuring
channels"), decided when a message arrives (`assistant.intake.channel_gate`) and, when Slack could
not say then, again by the run (`assistant.run.loop.agent`); and how a person who may not is told.

Membership of a user group is Slack's to say (`usergroups.users.list`). When Slack fails in a
way that may pass (`assistant.slack.connection.may_pass`) it is undecided, never a no: the
message is recorded and its run asks again, deferred like any run Slack fails."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from cachetools import TTLCache
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import ENGLISH, N_
from assistant.run.channels.channel_rules import ChannelRules
from assistant.run.channels.languages import Languages
from assistant.run.core.recorder import Recorder
from assistant.slack.connection import may_pass, slack_reason
from context.channels import may_use
from context.storage import EntryMeta, ThreadKey

log = logging.getLogger(__name__)

NOTE = N_(
    "Sorry, I'm not available to you in this channel: its settings list who may use me. "
    "A workspace admin can change them in my App Home."
)
GROUPS_SECONDS = 60  # how long a user group's members are taken as Slack last listed them


def refusal_line(user: str) -> str:
    """The system entry of a refusal in a thread that has a log: once per person."""
    return f"<@{user}> may not use the assistant in this channel; they were told so privately."


@dataclass
class ChannelAccess:
    """One workspace's: its client, and the user groups' members as Slack last listed them
    (shared by the ack and the runs, so a run asks Slack again only when the ack could not)."""

    client: AsyncWebClient
    languages: Languages | None = None  # None: the note in English
    # (team, group) → its members, as usergroups.users.list last gave them.
    _members: TTLCache[tuple[str, str], frozenset[str]] = field(
        default_factory=lambda: TTLCache(maxsize=1024, ttl=GROUPS_SECONDS)
    )

    async def may_use(self, team: str, user: str, rules: ChannelRules) -> bool:
        """Whether `user` may use the bot under `rules`; raises Slack's failure when a
        group's members cannot be listed now but may be later (`may_pass`)."""
        return may_use(rules.access, rules.users, user, await self._in_groups(team, user, rules))

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
                    if may_pass(exc):
                        raise
                    log.warning("cannot list user group %s: %s", group, slack_reason(exc))
                    continue  # its members are not admitted on its account
                members = frozenset(response.get("users") or ())
                self._members[(team, group)] = members
            if user in members:
                return True
        return False

    async def refuse(
        self,
        recorder: Recorder,
        key: ThreadKey,
        user: str,
        event_id: str | None,
        threaded: bool,
        rules: ChannelRules | None = None,
    ) -> None:
        """Tell `user` privately, once per thread, that they may not use the bot here (in
        their language under the channel's `rules`); the log, if the thread has one, says
        so. `threaded`: their message is a reply in the thread (the note goes there too)."""
        line = refusal_line(user)
        store = recorder.store
        if await recorder.read(store.has_thread, key):
            entries = await recorder.entries(key)
            if any(entry.content == line for entry in entries):
                return  # told already in this thread
        words = ENGLISH
        if self.languages is not None:
            words = (await self.languages.of(self.client, key.team, user, rules)).words
        try:
            await self.client.chat_postEphemeral(
                channel=key.channel,
                user=user,
                text=words.gettext(NOTE),
                thread_ts=key.thread_ts if threaded else None,
            )
        except SlackApiError as exc:
            log.warning("cannot tell %s in %s: %s", user, key, slack_reason(exc))
            return
        if await recorder.read(store.has_thread, key):
            # Only in a thread the bot is in already: a refused mention starts no log.
            await recorder.record(key, line, meta=EntryMeta(event_id=event_id))
