"""What the store keeps for streamed answers, on SQLite and PostgreSQL: the messages a run is
streaming (so that a resumed run finds them) and a reply's usage, which comes after its first
entry was recorded."""

from __future__ import annotations

from context.storage import EntryMeta, OpenStream, ThreadKey, ThreadMessage
from context.toolcalls import PostMessage

TS = "2025-04-04T12:33:00Z"
KEY = ThreadKey("T1", "C1", "1712233980.000100")


def test_open_streams_are_kept_until_their_post_is_marked_posted(store):
    store.append(KEY, "persona", TS)
    post = store.append(KEY, PostMessage(text="hello"), TS)
    assert store.open_streams(KEY) == []
    store.set_open_streams(KEY, ["1712233990.000100"])
    store.set_open_streams(KEY, ["1712233990.000100", "1712233991.000100"])
    assert store.open_streams(KEY) == [
        OpenStream("1712233990.000100"),
        OpenStream("1712233991.000100"),
    ]
    assert store.open_streams(ThreadKey("T2", "C1", KEY.thread_ts)) == []  # another workspace
    copies = [
        ThreadMessage(ts, "<@UBOT>", "hello") for ts in ("1712233990.000100", "1712233991.000100")
    ]
    store.mark_posted(KEY, post.index, "1712233991.000100", copies)
    assert store.open_streams(KEY) == []
    store.set_open_streams(KEY, ["1712233992.000100"])
    store.set_open_streams(KEY, [])
    assert store.open_streams(KEY) == []


def test_a_stream_not_confirmed_finished_or_gone_stays_open_and_keeps_its_thread_waiting(store):
    """A start whose answer was lost, and a stream that could not be deleted, stay recorded
    beside others: marking a post posted forgets only its own messages, and the thread is
    found by the sweep (`waiting_threads`) though nothing in it is owed an answer."""
    store.append(KEY, "persona", TS)
    post = store.append(KEY, PostMessage(text="hello"), TS)
    asked = OpenStream("1712233980.000000", "starting")
    store.change_open_streams(KEY, add=[asked])
    assert store.waiting_threads() == [KEY]
    assert store.claim(KEY, "A", 60) and store.waiting_threads() == []  # held: not waiting
    assert store.release(KEY, "A") is False  # nothing owed an answer
    store.change_open_streams(KEY, add=[OpenStream("1712233990.000100")])
    store.change_open_streams(
        KEY, add=[OpenStream("1712233990.000100", "owed")], remove=[OpenStream("1712233990.000100")]
    )
    store.change_open_streams(KEY, add=[OpenStream("1712233991.000100")])
    copies = [ThreadMessage("1712233991.000100", "<@UBOT>", "hello")]
    store.mark_posted(KEY, post.index, "1712233991.000100", copies)
    assert store.open_streams(KEY) == [asked, OpenStream("1712233990.000100", "owed")]
    store.change_open_streams(KEY, remove=[asked, OpenStream("1712233990.000100", "owed")])
    assert store.open_streams(KEY) == [] and store.waiting_threads() == []


def test_usage_is_set_on_an_entry_recorded_before_it(store):
    store.append(KEY, "persona", TS)
    first = store.append(KEY, PostMessage(text="hello"), TS)
    meta = EntryMeta(
        model="gpt-4o", prompt_tokens=1200, cached_tokens=1024, completion_tokens=80,
        latency_ms=812.5,
    )  # fmt: skip
    store.set_usage(KEY, first.index, meta)
    kept = store.metadata(KEY)[first.index]
    assert (kept.model, kept.prompt_tokens, kept.cached_tokens, kept.completion_tokens) == (
        "gpt-4o",
        1200,
        1024,
        80,
    )
    assert kept.latency_ms == 812.5
    assert store.threads()[0].prompt_tokens == 1200  # the totals count it
