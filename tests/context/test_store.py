"""The store promises (docs/architecture.md#storage), checked on every backend alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy import MetaData, create_engine, text

from context.entry import UserContent
from context.log import ContextLog
from context.storage import (
    EntryMeta,
    ImageRef,
    Pending,
    Store,
    ThreadKey,
    ThreadMessage,
    database_url,
    open_store,
)
from context.storage.engine import MIGRATIONS, migration_config
from context.storage.tables import metadata as store_metadata
from context.toolcalls import FinishRequest, GetThreadHistory, PostMessage

TS = "2025-04-04T12:33:00Z"
KEY = ThreadKey("T1", "C1", "1712233980.000100")


def user(text: str, who: str = "<@U1>") -> UserContent:
    return UserContent(userid=who, text=text)


def raw_rows(url: str, sql: str) -> list[tuple]:
    engine = create_engine(database_url(url))
    try:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(text(sql))]
    finally:
        engine.dispose()


# --- recording and loading ------------------------------------------------------------------


def test_round_trip_keeps_canonical_text(store: Store, store_url: str):
    recorded = [
        store.append(KEY, "You are Aya's helper. Ünïcödé stays as it is: 寿司 🍣", TS),
        store.append(KEY, user('<@UBOT> lunch? "quotes" and \\ too'), TS),
        store.append(KEY, GetThreadHistory(ascending=True, limit=5, reasoning="look back"), TS),
        store.append(KEY, PostMessage(text="Sushi at **noon** 🍣", reasoning="answer"), TS),
        store.append(KEY, FinishRequest(), TS),
    ]
    loaded = store.entries(KEY)

    assert [e.as_dict() for e in loaded] == [e.as_dict() for e in recorded]
    assert [e.canonical_json() for e in loaded] == [e.canonical_json() for e in recorded]
    stored = raw_rows(store_url, "SELECT content_json FROM entries ORDER BY idx")
    assert [row[0] for row in stored] == [e.canonical_json() for e in recorded]
    assert "🍣" in stored[0][0] and "\\u" not in stored[0][0]


def test_indexes_and_turns_follow_the_rules(store: Store):
    for content in ["rules", user("hi"), PostMessage(text="a"), FinishRequest(), "x", user("b")]:
        store.append(KEY, content, TS)
    loaded = store.entries(KEY)

    assert [(e.role, e.index, e.turn) for e in loaded] == [
        ("system", 0, 0),
        ("user", 1, 0),
        ("assistant", 2, 1),
        ("assistant", 3, 1),
        ("system", 4, 1),
        ("user", 5, 2),
    ]
    ContextLog(loaded)


def test_a_retried_event_is_recorded_once(store: Store):
    meta = EntryMeta(slack_ts="1712233981.000200", event_id="Ev1")
    assert store.append(KEY, user("hello"), TS, meta) is not None
    assert store.append(KEY, user("hello"), TS, meta) is None
    assert store.append(KEY, "edited", TS, EntryMeta(event_id="Ev1")) is None

    assert [e.content for e in store.entries(KEY)] == [user("hello")]


def test_a_message_sent_as_two_events_is_recorded_once(store: Store):
    mention = EntryMeta(slack_ts="1712233981.000200", event_id="EvMention")
    message = EntryMeta(slack_ts="1712233981.000200", event_id="EvMessage")
    assert store.append(KEY, user("<@UBOT> hi"), TS, mention) is not None
    assert store.append(KEY, user("<@UBOT> hi"), TS, message) is None
    # Only user entries share a message's ts by duplication; a note about it is new.
    edit = EntryMeta(slack_ts="1712233981.000200", event_id="EvEdit")
    assert store.append(KEY, "message 1712233981.000200 was edited", TS, edit) is not None

    assert [e.role for e in store.entries(KEY)] == ["user", "system"]
    assert [m.event_id for m in store.metadata(KEY)] == ["EvMention", "EvEdit"]


def test_the_same_channel_and_ts_in_two_teams_are_two_threads(store: Store):
    other = ThreadKey("T2", KEY.channel, KEY.thread_ts)
    meta = EntryMeta(slack_ts="1712233981.000200", event_id="Ev1")
    store.append(KEY, user("in team 1"), TS, meta)
    store.append(other, user("in team 2"), TS, meta)

    assert [e.content.text for e in store.entries(KEY)] == ["in team 1"]
    assert [e.content.text for e in store.entries(other)] == ["in team 2"]
    assert [e.index for e in store.entries(other)] == [0]


def test_entries_from_an_index(store: Store):
    for n in range(5):
        store.append(KEY, f"note {n}", TS)

    assert [e.index for e in store.entries(KEY, 0)] == [0, 1, 2, 3, 4]
    assert [e.index for e in store.entries(KEY, 3)] == [3, 4]
    assert store.entries(KEY, 5) == []
    assert store.entries(ThreadKey("T1", "C1", "unknown")) == []


def test_metadata_is_kept_beside_each_entry(store: Store):
    asked = EntryMeta(slack_ts="1712233981.000200", event_id="Ev1")
    answered = EntryMeta(
        model="gpt-test",
        prompt_tokens=1200,
        cached_tokens=1024,
        completion_tokens=35,
        latency_ms=812.5,
    )
    store.append(KEY, "rules", TS)
    store.append(KEY, user("hi"), TS, asked)
    store.append(KEY, PostMessage(text="hello"), TS, answered)

    assert store.metadata(KEY) == [EntryMeta(), asked, answered]
    assert store.metadata(ThreadKey("T1", "C1", "unknown")) == []


def test_threads_most_recent_first_with_token_totals(store: Store):
    first, second = KEY, ThreadKey("T1", "C2", "1712233999.000100")
    assert store.threads() == []
    assert not store.has_thread(first)

    store.append(first, "rules", TS)
    store.append(second, "rules", TS)
    store.append(first, PostMessage(text="a"), TS, EntryMeta(prompt_tokens=100, cached_tokens=64))
    store.append(first, FinishRequest(), TS, EntryMeta(prompt_tokens=150, completion_tokens=7))
    summaries = store.threads()

    assert [s.key for s in summaries] == [first, second]
    assert [s.entries for s in summaries] == [3, 1]
    totals = [(s.prompt_tokens, s.cached_tokens, s.completion_tokens) for s in summaries]
    assert totals == [(250, 64, 7), (0, 0, 0)]
    assert all(len(s.updated_at) == len(TS) and s.updated_at.endswith("Z") for s in summaries)
    assert summaries[0].created_at <= summaries[0].updated_at
    assert store.has_thread(first) and store.has_thread(second)


# --- schema ---------------------------------------------------------------------------------


def test_opening_again_keeps_the_data_and_the_schema_version(store: Store, store_url: str):
    store.append(KEY, "rules", TS)
    again = open_store(store_url)
    try:
        assert again.append(KEY, user("hi"), TS).index == 1
        assert len(store.entries(KEY)) == 2
    finally:
        again.close()

    head = ScriptDirectory(str(MIGRATIONS)).get_current_head()
    assert raw_rows(store_url, "SELECT version_num FROM alembic_version") == [(head,)]


def schema() -> MetaData:
    """The store's tables, and the OAuth tables of slack-sdk's installation and state stores
    (migration 0012_oauth; assistant/slack/installs.py), as those stores define them."""
    metadata = MetaData()
    for table in store_metadata.tables.values():
        table.to_metadata(metadata)
    installs, states = SQLAlchemyInstallationStore, SQLAlchemyOAuthStateStore
    installs.build_installations_table(metadata, installs.default_installations_table_name)
    installs.build_bots_table(metadata, installs.default_bots_table_name)
    states.build_oauth_states_table(metadata, states.default_table_name)
    return metadata


def test_the_migrated_schema_matches_the_store_tables(store: Store, store_url: str):
    engine = create_engine(database_url(store_url))
    try:
        with engine.connect() as connection:
            assert compare_metadata(MigrationContext.configure(connection), schema()) == []
    finally:
        engine.dispose()


# --- several processes ----------------------------------------------------------------------


# --- opening --------------------------------------------------------------------------------


def test_database_urls():
    assert database_url(None).render_as_string() == "sqlite:///assistant.db"
    assert database_url("").render_as_string() == "sqlite:///assistant.db"
    for scheme in ("postgres", "postgresql", "postgresql+psycopg"):
        url = database_url(f"{scheme}://app:s3cret@db.example:5432/assistant")
        assert url.drivername == "postgresql+psycopg"
        assert (url.username, url.password, url.host, url.database) == (
            "app",
            "s3cret",
            "db.example",
            "assistant",
        )


@pytest.mark.parametrize("url", ["mysql://app:s3cret@db/x", "postgresql+asyncpg://app:s3cret@db/x"])
def test_an_unsupported_url_names_its_scheme_but_not_its_password(url: str):
    with pytest.raises(ValueError, match="scheme") as raised:
        open_store(url)
    assert url.split(":")[0] in str(raised.value)
    assert "s3cret" not in str(raised.value)


def test_a_malformed_url_is_a_value_error():
    with pytest.raises(ValueError, match="not a database URL"):
        open_store("just some text")


def test_the_default_store_is_a_file_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = open_store(None)
    try:
        store.append(KEY, "rules", TS)
    finally:
        store.close()
    assert (tmp_path / "assistant.db").is_file()


# --- expected index, recorded messages, thread copies ---------------------------------------


def test_expect_index_records_only_at_that_index(store: Store):
    assert store.append(KEY, "persona", TS, expect_index=0).index == 0
    assert store.append(KEY, "persona again", TS, expect_index=0) is None
    assert [e.content for e in store.entries(KEY)] == ["persona"]


def test_has_message_knows_recorded_user_messages(store: Store):
    store.append(KEY, user("hi"), TS, EntryMeta(slack_ts="1712233981.000200"))
    assert store.has_message(KEY, "1712233981.000200")
    assert not store.has_message(KEY, "1712233999.000000")
    assert not store.has_message(ThreadKey("T2", "C1", KEY.thread_ts), "1712233981.000200")


def test_thread_message_copies_follow_edits_and_deletions(store: Store):
    other = ThreadKey("T1", "C1", "1712239999.000100")
    store.remember_messages(other, [ThreadMessage("1.000001", "<@U1>", "no thread yet")])
    assert store.thread_messages(other) == ([], False)

    store.append(KEY, "persona", TS)
    store.remember_messages(KEY, [ThreadMessage("1712233982.000100", "<@U2>", "second")])
    store.remember_messages(
        KEY,
        [
            ThreadMessage("1712233981.000100", "<@U1>", "first"),
            ThreadMessage("1712233982.000100", "<@U2>", "second, edited"),
        ],
        complete=True,
    )
    messages, complete = store.thread_messages(KEY)
    assert complete
    assert [(m.ts, m.text) for m in messages] == [
        ("1712233981.000100", "first"),
        ("1712233982.000100", "second, edited"),
    ]
    store.forget_message(KEY, "1712233981.000100")
    assert [m.text for m in store.thread_messages(KEY)[0]] == ["second, edited"]


def test_an_old_database_is_upgraded_with_its_data(store_url: str):
    engine = create_engine(database_url(store_url))
    try:
        with engine.begin() as connection:
            command.upgrade(migration_config(connection), "0001")
            connection.execute(
                text(
                    "INSERT INTO threads (team, channel, thread_ts, created_at, updated_at,"
                    " next_index, turn) VALUES ('T1', 'C1', :ts, 'x', 'x', 1, 0)"
                ),
                {"ts": KEY.thread_ts},
            )
            connection.execute(
                text(
                    "INSERT INTO entries (thread_id, idx, role, turn, timestamp, content_json,"
                    " recorded_at) VALUES (1, 0, 'system', 0, :ts, :json, 'x')"
                ),
                {
                    "ts": TS,
                    "json": f'{{"index":0,"turn":0,"timestamp":"{TS}","role":"system",'
                    '"content":"persona"}',
                },
            )
    finally:
        engine.dispose()
    store = open_store(store_url)
    try:
        assert [e.content for e in store.entries(KEY)] == ["persona"]
        assert store.thread_messages(KEY) == ([], False)
        assert store.append(KEY, user("hi"), TS).index == 1
        assert store.pending(KEY) == []  # old threads are not resumed
    finally:
        store.close()


# --- runs: what is owed an answer, and one holder per thread ---------------------------------

WANTS = EntryMeta(wants_answer=True)


def test_a_messages_action_token_is_kept_with_its_request_for_any_process(store: Store):
    """Slack's action token of a message owed an answer comes back with the request (a run
    resumed anywhere searches as its author), and beside the entry; never in its repr."""
    store.append(KEY, "rules", TS)
    meta = EntryMeta(slack_ts="1.1", wants_answer=True, action_token="123.456.abcdef")
    store.append(KEY, user("search for me"), TS, meta)
    [pending] = store.pending(KEY)
    assert (pending.index, pending.action_token) == (1, "123.456.abcdef")
    assert store.metadata(KEY)[1].action_token == "123.456.abcdef"
    assert "abcdef" not in repr(pending) + repr(store.metadata(KEY)[1])
    assert "action_token" not in store.metadata(KEY)[1].shown()


def test_pending_requests_until_a_run_ending_entry_answers_them(store: Store):
    store.append(KEY, "rules", TS)
    store.append(KEY, user("hi"), TS, EntryMeta(slack_ts="1.1", wants_answer=True))
    store.append(KEY, user("aside"), TS, EntryMeta(slack_ts="1.2"))  # wants no answer
    store.append(
        KEY, user("and?"), TS, EntryMeta(slack_ts="1.3", wants_answer=True, addressed=True)
    )
    assert store.pending(KEY) == [Pending(1, "1.1"), Pending(3, "1.3", addressed=True)]
    assert store.waiting_threads() == [KEY]
    # The run's last prompt held entries 0..1; its finishRequest and that fact are one write.
    store.append(KEY, FinishRequest(), TS, answered_through=1)
    assert store.pending(KEY) == [Pending(3, "1.3", addressed=True)]
    assert store.claim(KEY, "A", 60) and store.release(KEY, "A")  # owed still
    store.append(KEY, "Error: x", TS, answered_through=0)  # never moves back
    assert store.pending(KEY) == [Pending(3, "1.3", addressed=True)]
    store.append(KEY, "Error: y", TS, answered_through=4)
    store.append(KEY, "Error: z", TS, answered_through=2)  # never moves back
    assert store.pending(KEY) == [] and store.waiting_threads() == []
    assert store.claim(KEY, "A", 60) and not store.release(KEY, "A")  # nothing owed
    assert store.metadata(KEY)[1].wants_answer and not store.metadata(KEY)[2].wants_answer


def test_one_holder_at_a_time_until_its_lease_expires_or_is_released(store: Store):
    other = ThreadKey("T1", "C1", "other")
    store.append(KEY, "rules", TS)
    store.append(KEY, user("hi"), TS, WANTS)
    store.append(other, "rules", TS)
    store.append(other, user("hi"), TS, WANTS)
    assert store.claim(KEY, "A", 60)
    assert not store.claim(KEY, "B", 60)
    assert store.claim(KEY, "A", 60)  # renewed by its holder
    assert store.claim(other, "B", 60)  # another thread is another lease
    assert store.waiting_threads() == []  # both held
    assert store.release(KEY, "B")  # not B's to release; still owed
    assert not store.claim(KEY, "B", 60)
    assert store.release(KEY, "A")
    assert store.waiting_threads() == [KEY]
    assert store.claim(KEY, "B", 60)
    assert not store.claim(ThreadKey("T9", "C9", "1.0"), "A", 60)  # no such thread


def test_an_expired_lease_is_anyone_s(store: Store):
    store.append(KEY, "rules", TS)
    store.append(KEY, user("hi"), TS, WANTS)
    assert store.claim(KEY, "crashed", -1)  # already expired: its holder died long ago
    assert store.waiting_threads() == [KEY]
    assert store.claim(KEY, "B", 60)
    assert not store.claim(KEY, "crashed", 60)


def test_mark_posted_keeps_the_ts_of_a_post_and_its_thread_copies(store: Store):
    store.append(KEY, "rules", TS)
    store.append(KEY, PostMessage(text="hello world"), TS)
    parts = [
        ThreadMessage("1712233998.000100", "<@UBOT>", "hello"),
        ThreadMessage("1712233999.000100", "<@UBOT>", "world"),
    ]
    store.mark_posted(KEY, 1, "1712233999.000100", parts)
    assert store.metadata(KEY)[1].slack_ts == "1712233999.000100"
    assert not store.has_message(KEY, "1712233999.000100")  # a post is not a user message
    assert store.thread_messages(KEY) == (parts, False)
    store.mark_posted(ThreadKey("T1", "C1", "unknown"), 1, "1.0", parts)  # no such thread


def test_images_are_kept_beside_their_entries_and_the_newest_come_back(store: Store):
    def image(n: int) -> ImageRef:
        return ImageRef(f"F{n}", f"shot{n}.png", "image/png", 1000 + n, f"https://files/F{n}")

    store.append(KEY, "rules", TS)
    store.append(KEY, user("look [Image: shot1.png]"), TS, images=[image(1)])
    store.append(KEY, user("and these"), TS, images=[image(2), image(3)])
    store.append(KEY, PostMessage(text="nice"), TS)
    assert store.recent_images(KEY, 10) == [(1, image(1)), (2, image(2)), (2, image(3))]
    assert store.recent_images(KEY, 2) == [(2, image(2)), (2, image(3))]
    assert store.recent_images(ThreadKey("T1", "C1", "unknown"), 5) == []
    assert store.purge(datetime.now(UTC) + timedelta(days=1)) == [KEY]
    assert store.recent_images(KEY, 10) == []
