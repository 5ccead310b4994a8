"""What reaches `assistant serve` from anyone but Slack: refused before Bolt, with one log line;
bodies bounded in size and time; half-sent requests closed. And what /healthz says."""

from __future__ import annotations

import json
import logging
import socket
import sqlite3
import threading
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import create_engine, make_url, text

from assistant.fakes import ids
from assistant.fakes.events import attacks
from assistant.fakes.openai import responses as replies
from assistant.fakes.requests import sign
from assistant.serving.request_guard import MAX_BODY_BYTES
from tests.harness import TIMEOUT, RunningApp, app_settings, thread_of
from tests.harness import mention as say

GUARD = "assistant.serving.request_guard"


@pytest.fixture
def logs(caplog) -> Iterator[pytest.LogCaptureFixture]:
    """Every log record, uvicorn's too (its loggers do not propagate to the root)."""
    server = logging.getLogger("uvicorn.error")
    server.addHandler(caplog.handler)
    caplog.set_level(logging.INFO)
    yield caplog
    server.removeHandler(caplog.handler)


def answer_one_mention(app: RunningApp, slack, model, text: str = "still there?") -> None:
    model.script(
        replies.tool_calls(("postMessage", {"text": "Yes.", "reasoning": "r"})),
        replies.finish_request(),
    )
    mention = say(slack, text)
    assert app.send_event(mention).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    assert [c.params["thread_ts"] for c in slack.calls_to("chat.postMessage")] == [mention["ts"]]
    assert app.log(thread_of(mention))[1]["content"]["text"] == text


def test_requests_not_signed_by_slack_never_reach_bolt_and_leave_one_line_each(
    app, slack, model, logs
):
    for kind, (_, status) in attacks.MALFORMED.items():
        outcome = attacks.malformed(app.port, kind, TIMEOUT)
        assert (kind, outcome.status, outcome.closed) == (kind, status, True)
    # Signed with the real secret (only Slack has it) but not a payload Bolt can read.
    garbage = b"{not json"
    headers = {"Content-Type": "application/json", **sign(garbage)}
    assert app.request("POST", "/slack/events", garbage, headers).status == 400

    refused = [r for r in logs.records if r.name == GUARD]
    assert len(refused) == len(attacks.MALFORMED) + 1
    for record in logs.records:
        assert record.exc_info is None, record.getMessage()  # no traceback anywhere
        for content in ("not json", "event_callback", "garbage", "{{{{"):
            assert content not in record.getMessage()
    for record in refused:
        assert record.getMessage().startswith("refused POST /slack/events from 127.0.0.1:")
    assert app.assistant.store.threads() == []  # nothing recorded

    answer_one_mention(app, slack, model)


def test_a_body_over_the_limit_is_refused_unread(app, slack, model):
    # Declared: refused on the headers, whether or not it claims to be signed.
    for forged in (False, True):
        declared = attacks.exchange(
            app.port, [attacks.head(length=50_000_000, forged=forged)], TIMEOUT
        )
        assert (declared.status, declared.closed) == (413, True)
    # Chunked, so its size is known only as it comes: counted, and cut off at the limit
    # (the last chunk never sent, so an app that waited for the end would never answer).
    chunked = attacks.exchange(
        app.port,
        [attacks.head(chunked=True, forged=True), *attacks.filler(MAX_BODY_BYTES + 1, True)],
        TIMEOUT,
    )
    assert (chunked.status, chunked.closed) == (413, True)
    assert app.assistant.store.threads() == []

    answer_one_mention(app, slack, model)


def after_a_response(port: int, then: bytes) -> attacks.Outcome:
    """One complete request on a connection, its response read, then `then` on it."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = b""
        while not first.endswith(b'{"ok":true}'):  # its head and body may come apart
            chunk = sock.recv(65536)
            assert chunk, f"closed after {first!r}"
            first += chunk
        assert first.startswith(b"HTTP/1.1 200 "), first
        sock.sendall(then)
        try:
            closed = sock.recv(65536) == b""
        except TimeoutError:
            closed = False
    return attacks.Outcome(200, closed, len(then))


def test_half_sent_requests_and_slow_bodies_are_closed(app, slack, model):
    attempts: dict[str, Callable[[], attacks.Outcome]] = {
        "nothing sent": lambda: attacks.silent(app.port, TIMEOUT),
        "half a request line": lambda: attacks.half_request_line(app.port, TIMEOUT),
        "half the headers": lambda: attacks.half_headers(app.port, TIMEOUT),
        "a body that stops": lambda: attacks.slow_body(app.port, TIMEOUT),
        "half a second request": lambda: after_a_response(app.port, b"POST /slack/ev"),
    }
    outcomes: dict[str, attacks.Outcome] = {}

    def attempt(name: str) -> None:
        outcomes[name] = attempts[name]()

    threads = [threading.Thread(target=attempt, args=(name,)) for name in attempts]
    for thread in threads:
        thread.start()
    answer_one_mention(app, slack, model)  # meanwhile, Slack's events are answered
    for thread in threads:
        thread.join(2 * TIMEOUT)

    assert {name: (o.status, o.closed) for name, o in outcomes.items()} == {
        "nothing sent": (None, True),
        "half a request line": (None, True),
        "half the headers": (None, True),
        "a body that stops": (408, True),
        "half a second request": (200, True),
    }


def test_healthz_answers_ok_and_nothing_about_the_apps_work(app):
    response = app.request("GET", "/healthz")
    assert (response.status, json.loads(response.body)) == (200, {"ok": True})


def test_healthz_is_503_while_the_store_cannot_be_read(slack, model, postgres_url, logs):
    running = RunningApp(app_settings(slack, model, postgres_url)).start()
    try:
        assert running.request("GET", "/healthz").status == 200
        url = make_url(postgres_url)
        schema = url.query["options"].removeprefix("-csearch_path=")
        engine = create_engine(url.set(query={}))
        try:
            with engine.begin() as connection:
                connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        finally:
            engine.dispose()

        response = running.request("GET", "/healthz")
    finally:
        running.stop()
    assert response.status == 503
    assert json.loads(response.body) == {"ok": False, "error": "the store cannot be reached"}
    said = [r.getMessage() for r in logs.records if r.name == "assistant.serving.health"]
    assert len(said) == 1 and said[0].startswith("health check: the store failed: "), said
    assert "\n" not in said[0]


def test_healthz_is_503_while_the_store_cannot_be_written(make_app, tmp_path):
    # Another process holds SQLite's write lock: reads work, writes wait (and time out).
    app = make_app(database_url=f"sqlite:///{tmp_path / 'locked.db'}")
    database = make_url(app.settings.storage.database_url).database
    assert database is not None
    # mode=rw: the app's own file, never a new one (a PostgreSQL URL's database name, taken
    # for a path, once left an empty test_store_… file in the checkout).
    other = sqlite3.connect(f"file:{database}?mode=rw", uri=True, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        response = app.request("GET", "/healthz")
        assert response.status == 503
        assert json.loads(response.body) == {"ok": False, "error": "the store cannot be reached"}
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert app.request("GET", "/healthz").status == 200


def test_a_failing_writes_log_line_does_not_show_the_message(make_app, slack, logs, tmp_path):
    app = make_app(database_url=f"sqlite:///{tmp_path / 'broken.db'}")  # a SQLite trigger
    database = make_url(app.settings.storage.database_url).database
    assert database is not None
    with sqlite3.connect(f"file:{database}?mode=rw", uri=True) as broken:
        broken.execute(
            # The thread's entry 0 goes in; the person's message fails.
            "CREATE TRIGGER no_entries BEFORE INSERT ON entries WHEN NEW.role = 'user' "
            "BEGIN SELECT RAISE(ABORT, 'the disk is full'); END"
        )
    secret = "my salary is 123456 and my PIN is 9876"
    app.send_event(say(slack, secret))
    app.wait_listeners()

    shown = "\n".join(
        logs.handler.format(record) for record in logs.records if record.levelno >= logging.ERROR
    )
    assert "the disk is full" in shown  # the failure is logged...
    assert "123456" not in shown and "9876" not in shown  # ...without the message
    assert ids.BOT_TOKEN not in shown
