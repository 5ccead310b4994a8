"""`assistant show THREAD --follow` as a real process while another records in the thread, on
SQLite and PostgreSQL (the rest of `show`: tests/commands/test_show_thread.py)."""

from __future__ import annotations

import signal
from datetime import UTC, datetime, timedelta

from sqlalchemy import create_engine, make_url, text

from context.entry import UserContent
from context.render import render_log
from context.storage import database_url, open_store
from context.toolcalls import PostMessage
from tests.commands.test_show_thread import LUNCH, fill
from tests.process import AssistantProcess, clean_env


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
