"""`assistant threads` and `assistant export` on a database the test fills, on both backends."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, inspect, text

from context.canonical import load_log
from context.storage import EntryMeta, ThreadKey, ThreadMessage, database_url, open_store
from tests.cli import DATA, run_cli

SEED = load_log((DATA / "aya-lunch.json").read_bytes())
LUNCH = ThreadKey("T0AYA", "C0LUNCH", "1743769980.000100")
OTHER = ThreadKey("T0AYA", "C0OTHER", "1743770000.000200")


def fill(url: str) -> None:
    store = open_store(url)
    try:
        for entry in SEED.entries:
            meta = EntryMeta(model="gpt-test", prompt_tokens=100, completion_tokens=10)
            store.append(LUNCH, entry.content, entry.timestamp, meta)
        store.append(OTHER, "persona", "2025-04-04T13:00:00Z")
    finally:
        store.close()


def test_threads_lists_each_thread_with_its_id(store_url, tmp_path):
    fill(store_url)
    result = run_cli("threads", env={"DATABASE_URL": store_url}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert [line.split("\t")[0] for line in lines] == [str(OTHER), str(LUNCH)]
    assert lines[1].split("\t")[1:2] == ["4 entries"]
    assert lines[1].split("\t")[3] == "440 tokens (prompt 400, cached 0, completion 40)"


def test_export_writes_a_log_that_validates_and_renders(store_url, tmp_path):
    fill(store_url)
    env = {"DATABASE_URL": store_url}
    printed = run_cli("export", str(LUNCH), env=env, cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout) == [e.as_dict() for e in SEED.entries]

    out = tmp_path / "lunch.json"
    written = run_cli("export", str(LUNCH), "--out", str(out), env=env, cwd=tmp_path)
    assert written.returncode == 0 and written.stdout == b""
    assert out.read_bytes() == printed.stdout
    assert run_cli("validate", str(out)).returncode == 0
    shown = run_cli("show", str(out))
    assert shown.stdout == (DATA / "aya-lunch.console.txt").read_bytes()


def test_export_of_an_unknown_or_malformed_thread_is_a_clear_error(store_url, tmp_path):
    fill(store_url)
    env = {"DATABASE_URL": store_url}
    unknown = run_cli("export", "T0AYA/C0NONE/1.2", env=env, cwd=tmp_path)
    assert unknown.returncode == 2
    assert unknown.stderr.decode().splitlines()[-1] == (
        "assistant export: no thread T0AYA/C0NONE/1.2 in the store (see `assistant threads`)"
    )
    malformed = run_cli("export", "C0LUNCH", env=env, cwd=tmp_path)
    assert malformed.returncode == 2
    assert "is not of the form TEAM/CHANNEL/THREAD_TS" in malformed.stderr.decode()


def test_the_default_store_is_assistant_db_in_the_working_directory(tmp_path):
    fill(f"sqlite:///{tmp_path / 'assistant.db'}")
    result = run_cli("threads", cwd=tmp_path, env={"DATABASE_URL": ""})
    assert result.returncode == 0, result.stderr
    assert str(LUNCH) in result.stdout.decode()


@pytest.mark.parametrize(
    "args", [["threads"], ["export", str(LUNCH)], ["purge", "--older-than", "30"]]
)
def test_each_command_names_the_store_it_opened(args, store_url, tmp_path):
    fill(store_url)
    url = database_url(store_url)
    if url.get_backend_name() == "postgresql":
        url = url.set(password="hunter2")  # trust auth: never asked for, never to be shown
    result = run_cli(*args, env={"DATABASE_URL": url.render_as_string(False)}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # Where the store is, never who uses it: scheme, host and port (a SQLite URL, its file).
    if url.get_backend_name() == "postgresql":
        shown = f"{url.drivername}://{url.host}:{url.port}"
    else:
        shown = url.render_as_string()
    assert result.stderr.decode().splitlines() == [f"assistant {args[0]}: store {shown}"]
    assert "hunter2" not in result.stderr.decode()


@pytest.mark.parametrize(
    "args", [["threads"], ["export", str(LUNCH)], ["purge", "--older-than", "30"]]
)
def test_a_missing_sqlite_store_is_an_error_and_is_not_created(args, tmp_path):
    # The default, assistant.db in the working directory, run from the wrong directory.
    result = run_cli(*args, env={"DATABASE_URL": ""}, cwd=tmp_path)
    assert result.returncode == 2
    expected = f"assistant {args[0]}: no store at sqlite:///{tmp_path / 'assistant.db'}"
    assert result.stderr.decode() == f"{expected} (check DATABASE_URL)\n"
    assert list(tmp_path.iterdir()) == []


def test_an_empty_postgresql_database_is_not_made_a_store(postgres_url, tmp_path):
    result = run_cli("threads", env={"DATABASE_URL": postgres_url}, cwd=tmp_path)
    assert result.returncode == 2
    assert "assistant threads: no store at postgresql" in result.stderr.decode()
    engine = create_engine(database_url(postgres_url))
    try:
        with engine.connect() as connection:
            assert inspect(connection).get_table_names() == []  # no tables were created
    finally:
        engine.dispose()


def test_an_unsupported_database_url_is_a_clear_error(tmp_path):
    result = run_cli("threads", cwd=tmp_path, env={"DATABASE_URL": "mysql://me:pw@db/x"})
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr and b"pw" not in result.stderr
    assert b"'mysql' is not supported" in result.stderr


def test_an_unreachable_database_is_a_clear_error(tmp_path):
    url = "postgresql://someone:hunter2@127.0.0.1:9/nothing"  # port 9: nothing listens
    result = run_cli("threads", cwd=tmp_path, env={"DATABASE_URL": url})
    assert result.returncode == 2
    message = result.stderr.decode()
    assert message.startswith("assistant threads: cannot open the store at postgresql")
    assert "hunter2" not in message and "Traceback" not in message


def backdate(url: str, key: ThreadKey, updated_at: str) -> None:
    """Make a thread look untouched since `updated_at` (appends always stamp now)."""
    engine = create_engine(database_url(url))
    try:
        with engine.begin() as connection:
            connection.execute(
                text("UPDATE threads SET updated_at = :at WHERE channel = :channel"),
                {"at": updated_at, "channel": key.channel},
            )
    finally:
        engine.dispose()


def test_purge_deletes_only_threads_older_than_days_and_dry_run_deletes_nothing(
    store_url, tmp_path
):
    fill(store_url)
    store = open_store(store_url)
    try:
        store.remember_messages(LUNCH, [ThreadMessage("1743769980.000100", "U1", "lunch?")], True)
    finally:
        store.close()
    backdate(store_url, LUNCH, "2020-01-01T00:00:00.000000Z")
    env = {"DATABASE_URL": store_url}

    dry = run_cli("purge", "--older-than", "30", "--dry-run", env=env, cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    first, summary = dry.stdout.decode().splitlines()
    assert first == f"would delete\t{LUNCH}"
    assert summary.startswith("would delete 1 thread(s) not updated since ")
    listed = run_cli("threads", env=env, cwd=tmp_path).stdout.decode().splitlines()
    assert len(listed) == 2

    done = run_cli("purge", "--older-than", "30", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().splitlines()[0] == f"deleted\t{LUNCH}"
    listed = run_cli("threads", env=env, cwd=tmp_path).stdout.decode().splitlines()
    assert [line.split("\t")[0] for line in listed] == [str(OTHER)]

    store = open_store(store_url)
    try:
        assert not store.has_thread(LUNCH)
        assert store.entries(OTHER)[0].content == "persona"
        # The key is free again: a new log there starts at index 0, with no old copies.
        assert store.append(LUNCH, "again", "2025-04-05T10:00:00Z").index == 0
        assert store.thread_messages(LUNCH) == ([], False)
    finally:
        store.close()

    again = run_cli("purge", "--older-than", "30", env=env, cwd=tmp_path)
    assert again.stdout.decode().startswith("deleted 0 thread(s)")
    assert len(again.stdout.decode().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--older-than", "-1"], "DAYS must be a positive number"),
        (["--older-than", "0"], "DAYS must be a positive number"),
        (["--older-than", "soon"], "not a number of days: 'soon'"),
        ([], "--older-than"),
    ],
)
def test_purge_refuses_bad_days_clearly(args, message, tmp_path):
    db = tmp_path / "assistant.db"
    result = run_cli("purge", *args, env={"DATABASE_URL": f"sqlite:///{db}"}, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr.decode()
    assert "Traceback" not in result.stderr.decode()
    assert not db.exists()


def test_export_with_metadata_adds_each_entrys_metadata_and_the_totals(store_url, tmp_path):
    fill(store_url)
    out = tmp_path / "lunch.json"
    result = run_cli(
        "export",
        str(LUNCH),
        "--with-metadata",
        "--out",
        str(out),
        env={"DATABASE_URL": store_url},
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_text())
    assert document["thread"] == str(LUNCH)
    assert document["totals"] == {"prompt_tokens": 400, "cached_tokens": 0, "completion_tokens": 40}
    assert document["log"] == [entry.as_dict() for entry in SEED.entries]
    assert [m["model"] for m in document["metadata"]] == ["gpt-test"] * 4
    assert [m["prompt_tokens"] for m in document["metadata"]] == [100] * 4


def test_a_cutoff_centuries_ago_deletes_nothing_newer(store_url, tmp_path):
    # 400,000 days back is the year 931: compared as text, "931-…" sorted after "2026-…",
    # so every thread looked older than it.
    fill(store_url)
    env = {"DATABASE_URL": store_url}
    done = run_cli("purge", "--older-than", "400000", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = done.stdout.decode().splitlines()
    assert len(summary) == 1 and summary[0].startswith("deleted 0 thread(s) not updated since 0")
    assert len(run_cli("threads", env=env, cwd=tmp_path).stdout.decode().splitlines()) == 2
    store = open_store(store_url)
    try:
        for cutoff in (datetime(1, 1, 1, tzinfo=UTC), datetime(999, 12, 31, tzinfo=UTC)):
            assert store.purge(cutoff) == []
        assert {summary.key for summary in store.threads()} == {LUNCH, OTHER}
    finally:
        store.close()


@pytest.mark.parametrize("days", ["740000", "1e9", "1e300", "99999999999999999999"])
def test_purge_days_before_year_one_are_a_usage_error(days, tmp_path):
    db = tmp_path / "assistant.db"
    result = run_cli(
        "purge", "--older-than", days, env={"DATABASE_URL": f"sqlite:///{db}"}, cwd=tmp_path
    )
    assert result.returncode == 2
    assert result.stderr.decode().splitlines()[-1] == (
        f"assistant purge: error: argument --older-than: DAYS is too large: {days} days ago, "
        "that is before year 1"
    )
    assert not db.exists()
