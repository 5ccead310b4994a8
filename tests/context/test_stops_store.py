"""The store's stops (`StopStore`, docs/architecture.md#the-stop-button), on every backend: a
stop covers what is owed when it is pressed, stays pending until the entry recording it raises
answered_through, and changes nothing for a thread with nothing owed or a stop on its way."""

from __future__ import annotations

from context.entry import UserContent
from context.storage import EntryMeta, Opening, StopRequest, Store, ThreadKey, ThreadMessage
from context.toolcalls import FinishRequest

TS = "2025-04-04T12:33:00Z"
KEY = ThreadKey("T1", "C1", "1712233980.000100")


def ask(store: Store, text: str, ts: str) -> None:
    store.record_message(
        KEY,
        UserContent(userid="<@U1>", text=text),
        TS,
        EntryMeta(slack_ts=ts, wants_answer=True),
        Opening(lambda: "persona", TS),
        ThreadMessage(ts, "<@U1>", text),
    )


def test_a_stop_covers_what_is_owed_and_is_pending_until_recorded(store: Store):
    assert store.request_stop(KEY, "U1", "1.0", ()) is None  # a thread never seen
    ask(store, "first", "1712233981.000100")
    ask(store, "second", "1712233982.000100")
    stop = store.request_stop(KEY, "U2", "1712233983.000100", ("1712233983.000001",))
    assert stop == StopRequest("U2", "1712233983.000100", ("1712233983.000001",), 2)
    assert store.stop_requested(KEY) == stop
    # Pressed again (or Slack's retry): the first stands.
    assert store.request_stop(KEY, "U1", "1712233984.000100", ()) is None
    assert store.stop_requested(KEY) == stop
    ask(store, "after the stop", "1712233985.000100")
    store.append(KEY, "Stopped by <@U2>.", TS, answered_through=stop.through)
    assert store.stop_requested(KEY) is None
    assert [p.index for p in store.pending(KEY)] == [3]  # the next message starts afresh
    # A new stop covers the new request only.
    again = store.request_stop(KEY, "U1", "1712233986.000100", ())
    assert again is not None and again.through == 3


def test_a_stop_with_nothing_owed_changes_nothing(store: Store):
    ask(store, "hello", "1712233981.000100")
    store.append(KEY, FinishRequest(), TS, answered_through=1)
    assert store.request_stop(KEY, "U1", "1712233990.000100", ()) is None
    assert store.stop_requested(KEY) is None
