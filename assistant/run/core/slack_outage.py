"""A Slack outage delays answers; it does not lose them (docs/architecture.md#slack-outages).

A run that Slack fails in a way that may pass (HTTP 5xx, `fatal_error`, `internal_error`,
`service_unavailable`, `request_timeout`, a 429 or a dropped connection still there after the
client's own retries) is deferred: it stops, its request stays owed, and the thread is tried
again with backoff (1 s, then as long as it has waited so far, at most 60 s) until
`ASSISTANT_SLACK_OUTAGE_SECONDS` have passed since Slack first failed it. When each deferral
began and when it is due are kept in the store, so another process knows them; the entry that
ends the run clears them. An error that will not pass (`channel_not_found`, `not_in_channel`,
`invalid_auth`, ...) and one past that bound end the run at once: one apology if the thread can
be reached, an `Error:` entry.

The log gets one system entry when a deferral begins, not one per try, so a replay sees one
fact; each try is one line in the process's log (`RunScheduler`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from assistant.run.core.deferral import RESTARTED, SLACK_BACK, RunDeferred
from assistant.slack.connection import may_pass, retry_after
from context.storage import Store, ThreadKey
from context.storage.async_store import async_store

if TYPE_CHECKING:
    from assistant.run.core.recorder import Recorder

FIRST_RETRY_SECONDS = 1.0
MAX_RETRY_SECONDS = 60.0


def duration(seconds: float) -> str:
    return f"{round(seconds / 60)} min" if seconds >= 120 else f"{round(seconds)} s"


@dataclass(frozen=True)
class SlackOutages:
    store: Store  # not RunStore alone: `read` needs its local_reads
    seconds: float  # ASSISTANT_SLACK_OUTAGE_SECONDS

    async def wait(
        self, key: ThreadKey, exc: BaseException, reason: str, recorder: Recorder
    ) -> str:
        """Raise RunDeferred if the run should wait for Slack (the deferral recorded); else
        the reason the run ends with."""
        if not may_pass(exc):
            return reason
        now = datetime.now(UTC)
        since = await async_store(self.store).read(self.store.deferred_since, key)
        waited = (now - since).total_seconds() if since is not None else 0.0
        if waited >= self.seconds:
            return f"{reason}, still after {duration(waited)} of tries" if since else reason
        # Backoff doubles (the next wait is as long as the wait so far), within the bound: the
        # last try comes when it ends.
        delay = max(FIRST_RETRY_SECONDS, waited, retry_after(exc, 0.0))
        delay = min(delay, MAX_RETRY_SECONDS, self.seconds - waited)
        await async_store(self.store).write(
            self.store.defer, key, since or now, now + timedelta(seconds=delay)
        )
        if since is None:
            await recorder.record(
                key,
                f"{reason}. The run stopped; it is tried again until Slack answers, for up "
                f"to {duration(self.seconds)}.",
            )
        raise RunDeferred(f"{reason}; tried again in {duration(delay)}", delay)

    async def resumed(self, key: ThreadKey) -> str:
        """Why a run finds what an earlier run left unfinished: how the log says it."""
        deferred = await async_store(self.store).read(self.store.deferred_since, key)
        return SLACK_BACK if deferred is not None else RESTARTED
