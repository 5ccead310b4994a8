"""The browser's return from an MCP server's authorization server
(`/mcp/oauth/callback` under ASSISTANT_PUBLIC_URL; docs/slack-features.md#connecting-to-a-tool),
in any process serving HTTP: its state taken once (`assistant.mcp.signin.tokens`), the code
exchanged and the tokens kept, then the outcome recorded in the thread as an entry (no token,
no state) and the thread resumed at once, as an approval's click resumes it.

The outcome entry carries an event id of the call's own, so one outcome is recorded per
sign-in however often the page is reloaded; a state is single use anyway."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from assistant.mcp.signin.deployment import DEPLOYMENT_TEAM, DEPLOYMENT_USER
from assistant.run.approvals.sign_in import outcome_text, waiting_sign_in
from assistant.run.core.recorder import Recorder
from assistant.run.scheduling.elsewhere import RunRequests
from context.storage import EntryMeta
from context.storage.async_store import async_store

if TYPE_CHECKING:
    from assistant.mcp.signin.tokens import SignIns
    from context.storage.mcp_connections import SignInRow

log = logging.getLogger(__name__)

CONNECTED_PAGE = "Connected to {server}. You can close this page: the answer goes on in Slack."
NOT_CONNECTED_PAGE = "Not connected to {server}: {why}. The answer goes on in Slack without it."
UNKNOWN_PAGE = "This sign-in link was used already, replaced by a newer one, or never issued."
DEPLOYMENT_PAGE = (
    "Connected to {server} for the whole deployment. You can close this page: "
    "`assistant mcp login` ends now."
)
LATE_PAGE = (
    "Connected to {server}, but the request that asked no longer waits for it; ask again in Slack."
)


@dataclass(frozen=True)
class Page:
    status: int
    text: str


@dataclass(frozen=True)
class SignInCallback:
    recorder: Recorder  # the events' (a person's browser waits for the page)
    runs: RunRequests
    sign_ins: SignIns

    async def returned(self, state: str, code: str | None, error: str | None) -> Page:
        done = await self.sign_ins.complete(state, code, error)
        row = done.sign_in
        if row is None:
            log.info("an MCP sign-in callback with no sign-in of its state was refused")
            return Page(400, UNKNOWN_PAGE)
        why = None if done.connected else done.why
        if row.user == DEPLOYMENT_USER and row.team == DEPLOYMENT_TEAM:  # no thread waits
            if done.connected:
                return Page(200, DEPLOYMENT_PAGE.format(server=row.server))
            return Page(200, f"Not connected to {row.server}: {done.why}.")
        resumed = await self._resume(row, why)
        for other in done.others:  # other threads waiting for the same connection
            await self._resume(other, None)
        if not resumed:
            if done.connected:
                return Page(200, LATE_PAGE.format(server=row.server))
            return Page(400, UNKNOWN_PAGE)
        if done.connected:
            return Page(200, CONNECTED_PAGE.format(server=row.server))
        return Page(200, NOT_CONNECTED_PAGE.format(server=row.server, why=done.why))

    async def _resume(self, row: SignInRow, why: str | None) -> bool:
        """The sign-in's outcome recorded in its thread, and the thread resumed, if its call
        still waits for it; whether it did."""
        key = row.key
        waiting = waiting_sign_in(await self.recorder.entries(key))
        if (
            waiting is None
            or waiting.index != row.index
            or waiting.user != row.user
            or waiting.server != row.server
            or waiting.outcome is not None
        ):
            return False
        now = datetime.now(UTC)
        entry = await self.recorder.record(
            key,
            outcome_text(waiting.name, row.index, row.user, row.server, now, why),
            # One outcome per wait (a call asked again after a refusal waits anew).
            meta=EntryMeta(event_id=f"sign-in {row.index} {row.expires_at}"),
        )
        if entry is not None:
            store = self.recorder.store
            await async_store(store).write(store.defer, key, None, now)  # due now, anywhere
            self.runs.request(key)
        return True
