"""Writes that span two concerns of the store are one transaction: when any part of one fails,
nothing of it is recorded, and the error reaches the caller. The failing part is a real
constraint of the schema (a NOT NULL column), on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError

from context.entry import UserContent
from context.storage import EntryMeta, ImageRef, Opening, Pending, Store, ThreadKey, ThreadMessage
from context.toolcalls import FinishRequest, PostMessage

TS = "2025-04-04T12:33:00Z"
KEY = ThreadKey("T1", "C1", "1712233980.000100")
ASKED = "1712233981.000100"
# A copy without an author, an image without a name: the database refuses either.
BAD_COPY = ThreadMessage("1712233990.000100", None, "no author")  # type: ignore[arg-type]
BAD_IMAGE = ImageRef("F1", None, "image/png", 10, "https://files/F1")  # type: ignore[arg-type]


def ask(store: Store, copy: ThreadMessage) -> list:
    return store.record_message(
        KEY,
        UserContent(userid="<@U1>", text="hello?"),
        TS,
        EntryMeta(slack_ts=ASKED, wants_answer=True),
        Opening(lambda: "persona", TS),
        copy,
    )


def test_a_message_whose_copy_fails_is_not_recorded(store: Store):
    with pytest.raises(IntegrityError):
        ask(store, BAD_COPY)
    assert not store.has_thread(KEY)
    assert store.entries(KEY) == []
    assert not store.has_message(KEY, ASKED)
    # Slack's retry of the event then records it whole.
    assert [e.index for e in ask(store, ThreadMessage(ASKED, "<@U1>", "hello?"))] == [0, 1]
    assert store.thread_messages(KEY)[0] == [ThreadMessage(ASKED, "<@U1>", "hello?")]


def test_a_post_whose_copies_fail_is_not_marked_posted(store: Store):
    ask(store, ThreadMessage(ASKED, "<@U1>", "hello?"))
    store.append(KEY, PostMessage(text="hi"), TS)
    good = ThreadMessage("1712233989.000100", "<@UBOT>", "hi")
    with pytest.raises(IntegrityError):
        store.mark_posted(KEY, 2, "1712233990.000100", [good, BAD_COPY])
    assert store.metadata(KEY)[2].slack_ts is None
    assert store.thread_messages(KEY)[0] == [ThreadMessage(ASKED, "<@U1>", "hello?")]


def test_a_run_s_last_entry_that_fails_leaves_the_thread_owed(store: Store):
    ask(store, ThreadMessage(ASKED, "<@U1>", "hello?"))
    with pytest.raises(IntegrityError):
        store.append(KEY, FinishRequest(), TS, answered_through=1, images=[BAD_IMAGE])
    assert len(store.entries(KEY)) == 2
    assert store.pending(KEY) == [Pending(1, ASKED)]
    assert store.append(KEY, FinishRequest(), TS, answered_through=1).index == 2
    assert store.pending(KEY) == []
