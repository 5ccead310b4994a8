"""Recording (assistant/run/core/recorder.py): every entry into the store, then onto the trace
exactly once; a duplicate is neither; an entry that ends a run is refused to a run that may
have lost its lease. On a real store (SQLite and PostgreSQL)."""

from __future__ import annotations

import io
import json
import time
from typing import Any

import pytest

from assistant.run.core.lease import Lease, LeaseLost, current_lease
from assistant.run.core.recorder import Recorder
from context.entry import UserContent
from context.storage import EntryMeta, Store, ThreadKey
from context.trace import JsonTrace

KEY = ThreadKey("T1", "C1", "1712233980.000100")
TS = "2025-04-04T12:33:00Z"


def traced(trace: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.getvalue().splitlines()]


@pytest.fixture
def trace() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def recorder(store: Store, trace: io.StringIO) -> Recorder:
    return Recorder(store, JsonTrace(trace))


async def test_an_entry_is_stored_then_traced_once_and_a_duplicate_is_neither(
    recorder: Recorder, store: Store, trace: io.StringIO
) -> None:
    await recorder.record(KEY, "persona", TS)
    meta = EntryMeta(event_id="Ev1", slack_ts="1712233981.000100")
    user = UserContent(userid="<@U1>", text="hello")
    entry = await recorder.record(KEY, user, TS, meta)
    assert entry is not None and entry.index == 1
    again = await recorder.record(KEY, user, TS, meta)  # Slack delivered the event twice
    assert again is None
    assert [e.index for e in store.entries(KEY)] == [0, 1]
    lines = traced(trace)
    assert [line["entry"]["index"] for line in lines] == [0, 1]
    assert lines[1]["thread"] == str(KEY) and lines[1]["meta"]["event_id"] == "Ev1"


async def test_a_persons_message_opens_a_new_thread_with_its_persona_once(
    recorder: Recorder, store: Store, trace: io.StringIO
) -> None:
    asked: list[str] = []

    def persona() -> str:
        asked.append("persona")
        return "You are Aya."

    meta = EntryMeta(slack_ts="1712233981.000100", wants_answer=True)
    user = UserContent(userid="<@U1>", text="hello")
    first = await recorder.record_message(KEY, user, TS, meta, persona)
    assert first is not None and first.index == 1
    assert await recorder.record_message(KEY, user, TS, meta, persona) is None  # the same ts
    assert [e.content for e in store.entries(KEY)] == ["You are Aya.", user]
    assert asked == ["persona"]  # asked for only when the thread was new
    lines = traced(trace)
    assert [line["entry"]["index"] for line in lines] == [0, 1]
    # Entry 0 has no side metadata of its own; the message has its own.
    assert lines[0]["meta"]["slack_ts"] is None
    assert lines[1]["meta"]["slack_ts"] == "1712233981.000100"
    # Its copy for getThreadHistory is kept in the same write.
    messages, _ = store.thread_messages(KEY)
    assert [(m.ts, m.text) for m in messages] == [("1712233981.000100", "hello")]


async def test_a_run_that_may_have_lost_its_lease_ends_nothing(
    recorder: Recorder, store: Store, trace: io.StringIO
) -> None:
    await recorder.record(KEY, "persona", TS)
    token = current_lease.set(Lease(KEY, deadline=time.monotonic() - 1))  # expired
    try:
        with pytest.raises(LeaseLost):
            await recorder.record(KEY, "Error: the end", TS, answered_through=0)
        # What does not end the run is still recorded (the lease is checked where it counts).
        assert await recorder.record(KEY, "a note", TS) is not None
    finally:
        current_lease.reset(token)
    assert [e.content for e in store.entries(KEY)] == ["persona", "a note"]
    assert [line["entry"]["content"] for line in traced(trace)] == ["persona", "a note"]


async def test_a_write_of_its_own_is_traced_whatever_it_returns(
    recorder: Recorder, store: Store, trace: io.StringIO
) -> None:
    def one(text: str) -> Any:
        return store.append(KEY, text, TS)

    def two(first: str, second: str) -> Any:
        return [store.append(KEY, first, TS), store.append(KEY, second, TS)]

    def none() -> Any:
        return None

    assert [e.index for e in await recorder.record_by(one, "persona")] == [0]
    assert [e.index for e in await recorder.record_by(two, "a", "b")] == [1, 2]
    assert await recorder.record_by(none) == []
    assert [line["entry"]["index"] for line in traced(trace)] == [0, 1, 2]
