"""What a run shows while it works (docs/architecture.md#the-agent-loop): its thread's agent
session `processing` (`assistant.run.core.sessions`), and `active` again when it ends; where
Slack refuses sessions, the :eyes: reaction on the message being answered, or in a thread of the
assistant panel Slack's status (`assistant.run.progress.panel_status`), decided by the thread's side
metadata so that a resumed run knows it too. A panel thread's session is created with the title
the panel gave it. Where sessions apply but the call failed this once, a panel thread shows
nothing (the old status is refused there) and any other thread the reaction."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from assistant.run.core.sessions import ACTIVE, PROCESSING, SUSPENDED, AgentSessions
from assistant.run.progress.panel_status import PanelStatus
from assistant.slack.connection import SLACK_FAILURES, slack_reason
from context.storage import ThreadKey

log = logging.getLogger(__name__)

PROGRESS_REACTION = "eyes"


@dataclass(kw_only=True)
class Progress:
    """What one run shows: `start` before its first Slack call, `end` however it ends."""

    client: AsyncWebClient | None  # None: a replay, nobody to show it to
    key: ThreadKey
    message_ts: str  # the newest message the run answers
    sessions: AgentSessions | None = None
    panel_status: PanelStatus | None = None
    title: str | None = None  # a new session's
    initiator: str | None = None
    in_session: bool = False  # the session is shown (not the reaction or the status)
    in_panel: bool = False  # else: a thread of the assistant panel (its status)
    shown: bool = False  # the reaction or the panel's status was shown
    suspended: bool = False  # the run ended waiting for a person's approval

    async def start(self) -> None:
        if self.client is None:
            return
        panel = await self.panel_status.thread(self.key) if self.panel_status else None
        self.in_panel = panel is not None
        if self.sessions is not None:
            title = panel.title if panel is not None and panel.title else self.title
            try:
                self.in_session = await self.sessions.set(
                    self.key, PROCESSING, title, self.initiator
                )
            except SLACK_FAILURES as exc:  # shown the old way this once
                log.info("setting the session in %s failed: %s", self.key, slack_reason(exc))
        if self.in_session:
            return
        legacy = self.sessions is None or not self.sessions.applies(self.key.team)
        if self.in_panel and not legacy:
            return  # the panel's old status would be refused: nothing shown this once
        self.shown = True
        await self._show(True)

    async def end(self) -> None:
        if self.client is None:
            return
        if not self.in_session:
            if self.shown:
                await self._show(False)
            return
        assert self.sessions is not None
        try:
            await self.sessions.set(self.key, SUSPENDED if self.suspended else ACTIVE)
        except SLACK_FAILURES as exc:
            log.info("ending the session in %s failed: %s", self.key, slack_reason(exc))

    async def _show(self, working: bool) -> None:
        assert self.client is not None
        react = self.client.reactions_add if working else self.client.reactions_remove
        try:
            if self.in_panel and self.panel_status is not None:
                await self.panel_status.show(self.key, working)
            else:
                await react(
                    channel=self.key.channel, timestamp=self.message_ts, name=PROGRESS_REACTION
                )
        except SLACK_FAILURES as exc:
            # Progress is a courtesy: failing to show it must not fail the run.
            log.info("showing progress failed in %s: %s", self.key, slack_reason(exc))
