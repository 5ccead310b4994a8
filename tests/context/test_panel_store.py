"""The panel's side metadata and the feedback votes in the store, on both backends: each
written with its system entry in one transaction, a replay or a repeated click recorded once,
purged with the thread, listed by `assistant threads` and written by `assistant export
--with-metadata`."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from context.entry import UserContent
from context.storage import EntryMeta, Opening, PanelThread, Store, ThreadKey, Vote, open_store
from context.toolcalls import FinishRequest, PostMessage
from tests.cli import run_cli

TS = "2025-04-04T12:33:00Z"
KEY = ThreadKey("T1", "D1", "1712233980.000100")
OPENING = Opening(lambda: "persona", TS)
CONTEXT = {"channel_id": "C1", "team_id": "T1", "enterprise_id": ""}


def opened(store: Store, event_id: str = "Ev1") -> list:
    panel = PanelThread("U1", CONTEXT)
    return store.record_panel(
        KEY, panel, "<@U1> opened it", TS, EntryMeta(event_id=event_id), OPENING
    )


def answered(store: Store) -> int:
    """A question and its answer in the panel thread; the answer's index."""
    opened(store)
    store.append(KEY, UserContent(userid="<@U1>", text="hi"), TS)
    answer = store.append(KEY, PostMessage(text="Hello!"), TS)
    store.append(KEY, FinishRequest(), TS)
    return answer.index


def test_opening_records_entry_0_and_the_entry_and_keeps_the_context(store: Store):
    entries = opened(store)
    assert [(e.index, e.content) for e in entries] == [(0, "persona"), (1, "<@U1> opened it")]
    assert store.panel(KEY) == PanelThread("U1", CONTEXT, None)
    assert store.panel(ThreadKey("T1", "D1", "1.2")) is None


def test_a_retried_opening_or_context_change_records_nothing(store: Store):
    opened(store)
    assert opened(store) == []
    moved = PanelThread("U1", {**CONTEXT, "channel_id": "C2"})
    meta = EntryMeta(event_id="Ev2")
    assert [e.index for e in store.record_panel(KEY, moved, "now C2", TS, meta, OPENING)] == [2]
    assert store.record_panel(KEY, moved, "now C2", TS, meta, OPENING) == []
    assert [e.content for e in store.entries(KEY)] == ["persona", "<@U1> opened it", "now C2"]
    assert store.panel(KEY).context["channel_id"] == "C2"


def test_the_title_is_claimed_once_and_only_in_a_panel_thread(store: Store):
    other = ThreadKey("T1", "C1", "1712233980.000200")
    store.append(other, "persona", TS)
    assert not store.claim_title(other, "Lunch")
    opened(store)
    assert store.claim_title(KEY, "Lunch")
    assert not store.claim_title(KEY, "Dinner")
    assert store.panel(KEY).title == "Lunch"
    # A context change keeps the title.
    moved = PanelThread("U1", {**CONTEXT, "channel_id": "C2"})
    store.record_panel(KEY, moved, "now C2", TS, EntryMeta(event_id="Ev2"), OPENING)
    assert store.panel(KEY).title == "Lunch"


def test_a_vote_is_recorded_once_and_a_change_of_mind_again(store: Store):
    answer = answered(store)
    good = Vote(answer, "U1", "good")
    first = store.record_vote(KEY, good, "U1: good", TS, EntryMeta(event_id="click-1"))
    assert first is not None and first.content == "U1: good"
    # The same delivery replayed, and the same button clicked again: nothing more.
    assert store.record_vote(KEY, good, "U1: good", TS, EntryMeta(event_id="click-1")) is None
    assert store.record_vote(KEY, good, "U1: good", TS, EntryMeta(event_id="click-2")) is None
    bad = Vote(answer, "U1", "bad")
    assert store.record_vote(KEY, bad, "U1: bad", TS, EntryMeta(event_id="click-3")) is not None
    store.record_vote(KEY, Vote(answer, "U2", "good"), "U2: good", TS, EntryMeta(event_id="c4"))

    assert store.votes(KEY) == [Vote(answer, "U1", "bad"), Vote(answer, "U2", "good")]
    texts = [e.content for e in store.entries(KEY, start=answer + 2)]
    assert texts == ["U1: good", "U1: bad", "U2: good"]
    summary = next(s for s in store.threads() if s.key == KEY)
    assert (summary.good_votes, summary.bad_votes) == (1, 1)


@pytest.mark.parametrize("index", [0, 2, 4, 99])
def test_a_vote_on_anything_but_an_answer_is_refused_and_records_nothing(store: Store, index):
    answered(store)  # 0 persona, 1 opened, 2 user, 3 postMessage, 4 finishRequest
    before = store.entries(KEY)
    with pytest.raises(ValueError, match=f"no postMessage entry {index}"):
        store.record_vote(KEY, Vote(index, "U1", "good"), "x", TS, EntryMeta(event_id="c"))
    assert store.entries(KEY) == before
    assert store.votes(KEY) == []


def test_a_vote_in_an_unknown_thread_creates_no_thread(store: Store):
    with pytest.raises(ValueError):
        store.record_vote(KEY, Vote(3, "U1", "good"), "x", TS, EntryMeta(event_id="c"))
    assert not store.has_thread(KEY)


def test_purge_deletes_the_panel_metadata_and_the_votes(store: Store):
    answer = answered(store)
    store.record_vote(KEY, Vote(answer, "U1", "good"), "good", TS, EntryMeta(event_id="c"))
    assert store.purge(datetime.now(UTC) + timedelta(days=1)) == [KEY]
    assert store.panel(KEY) is None and store.votes(KEY) == []
    assert opened(store)[0].index == 0  # the thread starts over


def test_threads_shows_the_votes_and_export_writes_them(store_url: str, tmp_path):
    store = open_store(store_url)
    try:
        answer = answered(store)
        store.record_vote(KEY, Vote(answer, "<@U1>", "good"), "good", TS, EntryMeta(event_id="1"))
        store.record_vote(KEY, Vote(answer, "<@U2>", "bad"), "bad", TS, EntryMeta(event_id="2"))
        store.record_vote(KEY, Vote(answer, "<@U3>", "good"), "good", TS, EntryMeta(event_id="3"))
        store.claim_title(KEY, "Lunch")
    finally:
        store.close()
    env = {"DATABASE_URL": store_url}

    listed = run_cli("threads", env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    [line] = listed.stdout.decode().splitlines()
    assert line.split("\t")[0] == str(KEY)
    assert line.split("\t")[-1] == "feedback 2 good, 1 bad"

    out = tmp_path / "panel.json"
    exported = run_cli("export", str(KEY), "--with-metadata", "--out", str(out), env=env)
    assert exported.returncode == 0, exported.stderr
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["panel"] == {"user": "U1", "context": CONTEXT, "title": "Lunch"}
    assert document["feedback"] == {
        "good": 2,
        "bad": 1,
        "votes": [
            {"answer": answer, "user": "<@U1>", "vote": "good"},
            {"answer": answer, "user": "<@U2>", "vote": "bad"},
            {"answer": answer, "user": "<@U3>", "vote": "good"},
        ],
    }


def test_a_persons_session_title_is_kept_with_its_entry(store):
    """agent_session_title_changed: the entry and the title in one write; a retried event
    changes nothing; a later rename replaces the title."""
    store.record_panel(KEY, PanelThread("U1", {}), "opened", TS, EntryMeta(), OPENING)
    assert store.session_title(KEY) is None
    first = store.record_session_title(
        KEY, "Lunch plans", "U1", "renamed", TS, EntryMeta(event_id="Ev1")
    )
    assert [entry.content for entry in first] == ["renamed"]
    assert (
        store.record_session_title(KEY, "Other", "U1", "renamed", TS, EntryMeta(event_id="Ev1"))
        == []
    )
    assert store.session_title(KEY) == "Lunch plans"
    store.record_session_title(KEY, "Dinner", "U2", "again", TS, EntryMeta(event_id="Ev2"))
    assert store.session_title(KEY) == "Dinner"
