"""PostgreSQL turning read-only for a while (a failover: the old primary is a standby now, or
writes are not yet allowed) is a store error that passes, like a lost connection: the request
stays owed, no apology is posted that the log does not record, a message that arrives
meanwhile is left for Slack to send again, and nothing prints a traceback; once writes are
allowed again, one answer.

The real server is made read-only for the app's connections: a throwaway database of the
test's own gets `default_transaction_read_only = on` and its sessions are ended (what a
failover does to them), so every new connection the app makes is read-only; then `off`."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, create_engine, text

from assistant.fakes import requests as event_requests
from assistant.fakes.openai import responses as replies
from tests.harness import TIMEOUT, RunningApp, app_settings, thread_of
from tests.harness import mention as say

LEASE_SECONDS = 3  # a stopped run is resumed within a sweep (half of it)
ANSWER = "The café downstairs."


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every log record, uvicorn's too (its loggers do not propagate)."""
    server = logging.getLogger("uvicorn.error")
    server.addHandler(caplog.handler)
    caplog.set_level(logging.INFO)
    yield caplog
    server.removeHandler(caplog.handler)


class Failover:
    """A database of its own, which the test turns read-only and back."""

    def __init__(self, server: Engine) -> None:
        self.server = server  # connected to another database of the same server
        self.name = f"test_ro_{uuid.uuid4().hex[:12]}"
        with server.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{self.name}"'))
        self.url = server.url.set(database=self.name).render_as_string(hide_password=False)

    def read_only(self, on: bool) -> None:
        with self.server.connect() as connection:
            connection.execute(
                text(
                    f'ALTER DATABASE "{self.name}" SET default_transaction_read_only = '
                    + ("on" if on else "off")
                )
            )
            if on:  # sessions keep the setting they began with: the failover ends them
                connection.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = :name AND pid <> pg_backend_pid()"
                    ),
                    {"name": self.name},
                )

    def drop(self) -> None:
        with self.server.connect() as connection:
            connection.execute(text(f'DROP DATABASE "{self.name}" WITH (FORCE)'))


@pytest.fixture
def failover(postgres_database: Engine) -> Iterator[Failover]:
    server = create_engine(postgres_database.url, isolation_level="AUTOCOMMIT")
    database = Failover(server)
    try:
        yield database
    finally:
        database.drop()
        server.dispose()


def answer_and_finish() -> replies.Completion:
    return replies.tool_calls(
        ("postMessage", {"text": ANSWER, "reasoning": "answer"}),
        ("finishRequest", {"reasoning": "done"}),
    )


def test_a_store_that_turns_read_only_for_a_while_loses_nothing_and_says_it_once(
    slack, model, failover, logs
):
    settings = app_settings(slack, model, failover.url, assistant_run_lease_seconds=LEASE_SECONDS)
    app = RunningApp(settings).start()
    try:
        held = replies.hold(answer_and_finish())
        model.script(held)
        model.default = answer_and_finish()  # the resumed run's step
        event = say(slack, "where do we eat?")
        assert app.send_event(event).status == 200
        held.wait_reached()

        failover.read_only(True)
        # A message meanwhile cannot be recorded: not acknowledged, so Slack sends it again.
        later = event_requests.event_callback(say(slack, "and tomorrow?"))
        assert app.send_event(later["event"], payload=later).status == 500
        held.release()
        app.wait_idle()  # the run stopped (its lease could not be renewed, or its write failed)
        assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == []

        failover.read_only(False)
        assert app.send_event(later["event"], payload=later, retry_num=1).status == 200
        slack.wait_for_call("chat.postMessage", count=2, timeout=TIMEOUT)
        app.wait_idle()
        for key in (thread_of(event), thread_of(later["event"])):
            log = app.log(key)
            assert [e["content"] for e in log if e["role"] == "system"][1:] == []
            assert app.assistant.store.pending(key) == []
    finally:
        app.stop()

    posted = [c.params["text"] for c in slack.calls_to("chat.postMessage") if c.ok]
    assert posted == [ANSWER, ANSWER]  # one answer each: no apology, nothing twice
    assert "Traceback" not in logs.text
    shown = [r for r in logs.records if r.levelno >= logging.WARNING]
    assert [r.getMessage() for r in shown if r.exc_info or r.levelno > logging.WARNING] == []
    assert all("\n" not in r.getMessage() for r in shown)
    assert any("read-only" in r.getMessage() for r in shown), "the outage is in the log"
