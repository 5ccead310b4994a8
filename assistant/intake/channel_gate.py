"""Whether a person's message is taken in its channel (docs/configuration.md, "Configuring
channels"): not at all in a channel where the bot is off; from a person who may not use it there,
one short ephemeral note instead (docs/log-format.md#refusals), and no run. When Slack cannot say
whether they may (a user group's members cannot be listed just now), the message is taken and its
run decides (`assistant.run.loop.channel_access`): a person is never refused for Slack's fault."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from assistant.run.channels.channel_rules import ChannelRules, Channels
from assistant.run.core.recorder import Recorder
from assistant.run.loop.channel_access import NOTE, ChannelAccess, refusal_line
from assistant.slack.connection import SLACK_FAILURES, slack_reason
from context.storage import ThreadKey

__all__ = ["NOTE", "ChannelGate", "refusal_line"]

log = logging.getLogger(__name__)


@dataclass
class ChannelGate:
    channels: Channels
    access: ChannelAccess
    recorder: Recorder

    @property
    def client(self) -> AsyncWebClient:
        return self.access.client

    async def admit(
        self, team: str, key: ThreadKey, user: str, event_id: str | None, threaded: bool
    ) -> ChannelRules | None:
        """The channel's rules when `user`'s message is to be taken; None when it is not
        (the bot is off there, or they may not use it: then they were told, once).
        `threaded`: the message is a reply in a thread (the note goes there too)."""
        rules = await self.channels.rules(team, key.channel)
        if not rules.enabled:
            return None  # quietly: the admins turned the bot off here
        try:
            if await self.access.may_use(team, user, rules):
                return rules
        except SLACK_FAILURES as exc:
            log.warning(
                "whether %s may use the bot in %s is undecided (%s): the message is taken, "
                "and its run asks Slack again",
                user,
                key,
                slack_reason(exc),
            )
            return rules
        await self.access.refuse(self.recorder, key, user, event_id, threaded, rules)
        return None
