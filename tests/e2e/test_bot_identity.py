"""An event is recorded and acknowledged whatever Slack's Web API does: the bot's identity
(`auth.test`) is learned once and kept, never asked for on every request
(assistant/slack/bot_identity.py)."""

from __future__ import annotations

import http.client
import logging
import signal

import pytest

from assistant.fakes.requests import event_callback, signed_event_request
from assistant.fakes.slack.faults import DROPPED
from context.storage import open_store
from tests.harness import mention, script_answers, thread_of
from tests.process import TIMEOUT, AssistantProcess
from tests.processes.test_socket_mode import free_port, serve_env

# How events are handled, not served: the Bolt tier (tests/bolt_tier.py); the tests that
# start real processes (`AppServer`, `AssistantProcess`) do not use `app` and keep them.
pytestmark = pytest.mark.listeners


def test_events_are_recorded_and_answered_while_auth_test_fails(app, slack, model, caplog):
    slack.outage("auth.test", status=500)
    script_answers(model)
    event = mention(slack, "hello")
    assert app.send_event(event).status == 200
    app.wait_handled()
    log = app.log(thread_of(event))
    assert [e["role"] for e in log[:2]] == ["system", "user"]  # recorded, and answered
    assert log[-1]["content"]["toolCall"] == "finishRequest"
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


def test_the_bot_is_asked_who_it_is_once(app, slack, model):
    script_answers(model, 3)
    events = [mention(slack, f"question {n}") for n in range(3)]
    for event in events:
        assert app.send_event(event).status == 200
        app.wait_handled()
    assert len(slack.calls_to("auth.test")) == 1  # learned at the first event, then kept
    for n, event in enumerate(events):
        assert app.log(thread_of(event))[1]["content"]["text"] == f"question {n}"


def test_serve_records_and_acknowledges_with_slack_unreachable(slack, model, tmp_path):
    port = free_port()
    env = serve_env(slack, model, tmp_path, port)
    env["SLACK_API_URL"] = f"http://127.0.0.1:{free_port()}/api/"  # nothing listens there
    script_answers(model)
    event = mention(slack, "are you there?")
    body, headers = signed_event_request(event_callback(event))
    with AssistantProcess("serve", "--host", "127.0.0.1", env=env, cwd=tmp_path) as app:
        app.stderr.wait_for(r"Uvicorn running on")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        try:
            connection.request("POST", "/slack/events", body=body, headers=headers)
            status = connection.getresponse().status
        finally:
            connection.close()
        assert status == 200
        app.stderr.wait_for(r"its request stays owed", timeout=60)  # the run waits for Slack
        code = app.stop(signal.SIGTERM)
    assert code == 0, app.stderr.text
    assert "Traceback" not in app.stderr.text
    store = open_store(env["DATABASE_URL"])
    try:
        key = thread_of(event)
        assert [e.role for e in store.entries(key)][:2] == ["system", "user"]
        assert store.pending(key)  # owed: the next process answers it
    finally:
        store.close()


def test_a_dropped_auth_test_does_not_fail_the_event(app, slack, model):
    slack.outage("auth.test", status=DROPPED)
    script_answers(model)
    event = mention(slack, "hello")
    assert app.send_event(event).status == 200
    app.wait_handled()
    assert app.log(thread_of(event))[1]["role"] == "user"
