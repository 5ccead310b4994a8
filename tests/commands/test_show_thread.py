"""`assistant show TEAM/CHANNEL/THREAD_TS`: a stored thread rendered like a saved file, from
an entry on (`--from`), and followed as other processes record in it (`--follow`), on SQLite
and PostgreSQL."""

from __future__ import annotations

import signal
from datetime import UTC, datetime, timedelta

from sqlalchemy import create_engine, make_url, text

from context.canonical import load_log
from context.entry import UserContent
from context.render import render_log
from context.storage import EntryMeta, ThreadKey, database_url, open_store
from context.toolcalls import PostMessage
from tests.cli import DATA, run_cli
from tests.process import AssistantProcess, clean_env

SEED = load_log((DATA / "aya-lunch.json").read_bytes())
GOLDEN = (DATA / "aya-lunch.console.txt").read_bytes()
LUNCH = ThreadKey("T0AYA", "C0LUNCH", "1743769980.000100")


def fill(url: str) -> None:
    store = open_store(url)
    try:
        for entry in SEED.entries:
            store.append(LUNCH, entry.content, entry.timestamp, EntryMeta())
    finally:
        store.close()


def test_a_stored_thread_renders_like_its_file(store_url, tmp_path):
    fill(store_url)
    env = {"DATABASE_URL": store_url}
    shown = run_cli("show", str(LUNCH), env=env, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == GOLDEN

    tail = run_cli("show", str(LUNCH), "--from", "2", env=env, cwd=tmp_path)
    assert tail.stdout.decode() == render_log(SEED.entries[2:])
    last = run_cli("show", str(LUNCH), "--from", "-1", env=env, cwd=tmp_path)
    assert last.stdout.decode() == render_log(SEED.entries[3:])
    from_file = run_cli("show", str(DATA / "aya-lunch.json"), "--from", "-2")
    assert from_file.stdout == tail.stdout


def test_follow_prints_what_another_process_records(store_url, tmp_path):
    fill(store_url)
    env = clean_env(DATABASE_URL=store_url)
    with AssistantProcess("show", str(LUNCH), "--follow", env=env, cwd=tmp_path) as follower:
        follower.stdout.wait_for("Suggesting a lunch option to the user\n")
        # This test process is the other process: it records as the app would.
        store = open_store(store_url)
        try:
            store.append(
                LUNCH,
                UserContent(userid="<@U0ANA>", text="E de sobremesa?"),
                "2025-04-04T12:36:00Z",
            )
            follower.stdout.wait_for("> E de sobremesa\\?\n")
            store.append(
                LUNCH, PostMessage(text="Pudim!", reasoning="Dessert"), "2025-04-04T12:37:00Z"
            )
            follower.stdout.wait_for("Reason: Dessert\n")
            entries = store.entries(LUNCH)
        finally:
            store.close()
        assert follower.stop(signal.SIGINT) == 130  # Ctrl-C ends it
    assert follower.stdout.text == render_log(entries)
    assert "Traceback" not in follower.stderr.text


def test_show_says_what_is_wrong_with_its_argument(tmp_path):
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}"}
    fill(env["DATABASE_URL"])
    missing = run_cli("show", "nothing-here.json", env=env, cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.decode().strip() == (
        "assistant show: cannot read nothing-here.json: no such file "
        "(nor is it a thread id TEAM/CHANNEL/THREAD_TS)"
    )
    unknown = run_cli("show", "T0AYA/C0LUNCH/1.2", env=env, cwd=tmp_path)
    assert unknown.returncode == 2
    assert b"no thread T0AYA/C0LUNCH/1.2 in the store" in unknown.stderr
    follow_file = run_cli("show", str(DATA / "aya-lunch.json"), "--follow", cwd=tmp_path)
    assert follow_file.returncode == 2
    assert b"--follow watches a stored thread" in follow_file.stderr
    # A file wins over a thread id of the same name.
    (tmp_path / "T0AYA" / "C0LUNCH").mkdir(parents=True)
    (tmp_path / str(LUNCH)).write_bytes((DATA / "aya-lunch.json").read_bytes())
    as_file = run_cli("show", str(LUNCH), env={"DATABASE_URL": "mysql://x/y"}, cwd=tmp_path)
    assert as_file.returncode == 0 and as_file.stdout == GOLDEN


def test_follow_keeps_going_when_the_database_drops_its_connection(postgres_url, tmp_path):
    fill(postgres_url)
    url = make_url(postgres_url)
    follower_url = url.update_query_dict({"application_name": "assistant-follow"})
    env = clean_env(DATABASE_URL=follower_url.render_as_string(hide_password=False))
    with AssistantProcess("show", str(LUNCH), "--follow", env=env, cwd=tmp_path) as follower:
        follower.stdout.wait_for("Suggesting a lunch option to the user\n")
        engine = create_engine(database_url(postgres_url))
        try:
            with engine.begin() as connection:  # as a database restart does to it
                cut = connection.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE application_name = 'assistant-follow'"
                    )
                ).all()
            assert cut
        finally:
            engine.dispose()
        store = open_store(postgres_url)
        try:
            store.append(LUNCH, PostMessage(text="Still here."), "2025-04-04T12:37:00Z")
            follower.stdout.wait_for('"Still here."\n')
            entries = store.entries(LUNCH)
        finally:
            store.close()
        assert follower.stop(signal.SIGINT) == 130
    assert follower.stdout.text == render_log(entries)
    assert "Traceback" not in follower.stderr.text


def test_follow_goes_on_to_the_new_log_of_a_purged_thread_and_says_so(store_url, tmp_path):
    fill(store_url)
    env = clean_env(DATABASE_URL=store_url)
    with AssistantProcess("show", str(LUNCH), "--follow", env=env, cwd=tmp_path) as follower:
        follower.stdout.wait_for("Suggesting a lunch option to the user\n")
        store = open_store(store_url)
        try:
            old = store.entries(LUNCH)
            assert store.purge(datetime.now(UTC) + timedelta(days=1)) == [LUNCH]
            follower.stderr.wait_for("deleted \\(purged\\)")
            # A later message there starts a new log, at index 0, under the same key.
            store.append(LUNCH, "You're Aya, again.", "2025-04-05T09:00:00Z")
            store.append(
                LUNCH, UserContent(userid="<@U0ANA>", text="Nova conversa"), "2025-04-05T09:00:00Z"
            )
            follower.stdout.wait_for("> Nova conversa\n")
            new = store.entries(LUNCH)
        finally:
            store.close()
        assert follower.stop(signal.SIGINT) == 130
    assert follower.stdout.text == render_log([*old, *new])
    said = follower.stderr.text.splitlines()[1:]  # after the store it opened
    assert len(said) == 2, said
    # Waiting, if the follower looked before the new log was started.
    assert said[0] in [
        f"assistant show: the log of {LUNCH} was deleted (purged){waiting}"
        for waiting in ("", "; waiting for a new log there")
    ]
    assert said[1] == f"assistant show: a new log was started in {LUNCH}; following it from entry 0"
