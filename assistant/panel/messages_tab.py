"""The agent's Messages tab (Slack's agent messaging experience, `features.agent_view`): the
person's DM with the app, where each top-level message starts a thread of its own.

Opening the tab (`app_home_opened`, `tab: "messages"`) shows the suggested prompts
(ASSISTANT_SUGGESTED_PROMPTS) under the greeting as their title, set for the DM without a
thread, as Slack asks of agents. Slack keeps them there, so they are set at most once per
person every `PROMPTS_EVERY` (kept in the store, so every process agrees), and nothing is ever
posted on opening. No thread exists yet, so no log records it; the process's log says when
Slack refused.

What the person is viewing (`app_context_changed`) is kept by `EventRecorder.viewing_changed`
and written into the thread they write in next (`assistant.intake.viewing`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import (
    AsyncSetSuggestedPrompts,
)
from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import ENGLISH
from assistant.intake.event_shapes import HomeOpenedFields, checked
from assistant.panel.events import slack_failure
from assistant.panel.prompts import PromptRefusals
from assistant.run.channels.languages import Languages
from assistant.run.core.recorder import Recorder
from assistant.settings.environment import Settings
from assistant.slack.connection import SLACK_FAILURES

log = logging.getLogger(__name__)

# Prompts a person saw this recently are still in their DM: opening the tab again, even in
# another process, sets nothing.
PROMPTS_EVERY = timedelta(hours=12)


@dataclass(frozen=True)
class MessagesTab:
    settings: Settings
    recorder: Recorder
    languages: Languages | None = None  # the default prompts' and greeting's (None: English)
    prompts: PromptRefusals = field(default_factory=PromptRefusals)  # the panel's, shared

    async def opened(
        self,
        body: dict[str, Any],
        event: dict[str, Any],
        set_suggested_prompts: AsyncSetSuggestedPrompts | None,
        client: AsyncWebClient | None = None,
    ) -> None:
        """app_home_opened: on the Messages tab, the prompts, unless shown lately."""
        if event.get("tab") != "messages":
            return  # the Home tab is off in the manifest; nothing to show there
        found = checked(body, event, HomeOpenedFields)
        if (
            found is None
            or not self.settings.persona.suggested_prompts_in()
            or set_suggested_prompts is None
        ):
            return
        if not self.prompts.applies(found.team):
            return  # said once in the log when Slack refused them
        store, user = self.recorder.store, event["user"]
        now = datetime.now(UTC)
        if not await self.recorder.call(store.claim_prompts, found.team, user, now, PROMPTS_EVERY):
            return
        words = ENGLISH
        if self.languages is not None:
            words = (await self.languages.person(client, found.team, user)).words
        prompts = self.settings.persona.suggested_prompts_in(words)
        try:
            await set_suggested_prompts(
                [prompt.model_dump() for prompt in prompts],
                title=self.settings.persona.greeting_in(words),
            )
        except SLACK_FAILURES as exc:
            self.prompts.note(found.team, exc)
            log.warning("could not show the suggested prompts to %s: %s", user, slack_failure(exc))
