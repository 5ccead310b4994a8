"""A stream Slack made replaces its start in the store even when the run is cancelled while
that write is on its way (`assistant.run.core.leftovers.confirm_start`), and the run ends
only after it: else the stop that cancelled the run finds a start nobody confirmed, and the
thread's next run deletes the message the stop was to keep. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest

from assistant.run.core.leftovers import confirm_start
from context.storage import OpenStream, ThreadKey

KEY = ThreadKey("T1", "C1", "1712233980.000100")
ASKED = OpenStream("1712233980.000000", "starting")
MADE = "1712233990.000100"


def test_a_started_stream_is_recorded_before_its_cancelled_run_ends(store):
    store.append(KEY, "persona", "2025-04-04T12:33:00Z")
    store.change_open_streams(KEY, [ASKED])

    async def cancelled_as_it_records() -> list[OpenStream]:
        task = asyncio.ensure_future(confirm_start(store, KEY, ASKED, MADE))
        await asyncio.sleep(0)  # the task runs to its write, handed to a thread
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return store.open_streams(KEY)  # as the run leaves the store when it ends

    assert asyncio.run(cancelled_as_it_records()) == [OpenStream(MADE)]
