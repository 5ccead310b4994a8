"""The stop button, as real processes take it (issue 23): over Socket Mode (`assistant run`),
and with the run in another process than the one Slack told, both on one PostgreSQL database:
the stop travels through the store, and the process holding the lease stops its run."""

from __future__ import annotations

import http.client
import signal

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from assistant.fakes.openai import responses as replies
from assistant.fakes.requests import signed_event_request
from bench.server import AppServer
from context.storage import ThreadKey, open_store
from tests.harness import mention as say
from tests.harness import thread_of, wait_session
from tests.process import TIMEOUT, AssistantProcess
from tests.processes.test_socket_mode import socket_env

FINISH = ("finishRequest", {"reasoning": "done"})


def stopped_log(database_url: str, key: ThreadKey) -> tuple[list[str], int]:
    """The thread's entries (their content, as text) and how many requests are still owed."""
    store = open_store(database_url)
    try:
        return [str(e.as_dict()["content"]) for e in store.entries(key)], len(store.pending(key))
    finally:
        store.close()


def test_stop_over_socket_mode(slack, model, tmp_path):
    slack.agents.agent = True
    held = replies.hold(replies.tool_calls(("postMessage", {"text": "Late", "reasoning": "r"})))
    model.script(held)
    env = socket_env(slack, model, tmp_path)
    with AssistantProcess("run", env=env, cwd=tmp_path) as app:
        slack.wait_connected(timeout=TIMEOUT)
        event = say(slack, "take your time")
        slack.wait_for_ack(slack.send_event(event), timeout=TIMEOUT)
        held.wait_reached(timeout=TIMEOUT)
        stop = slack.agents.press_stop(event["channel"], event["ts"])
        slack.wait_for_ack(slack.send_event(stop), timeout=TIMEOUT)
        wait_session(slack, event, "active")
        held.release()
        code = app.stop(signal.SIGTERM)

    assert code == 0, app.stderr.text
    entries, owed = stopped_log(env["DATABASE_URL"], thread_of(event))
    assert entries[-1].startswith(f"Stopped: <@{ids.USER_ID}> pressed stop at ")
    assert owed == 0
    assert not slack.calls_to("chat.postMessage")
    assert "Traceback" not in app.stderr.text


def test_stop_reaches_the_run_in_another_process(postgres_url, tmp_path):
    """The mention goes to the first process, the stop to the second: the first stops."""
    with FakeSlack(agent=True) as slack, FakeOpenAI() as model:
        held = replies.hold(replies.tool_calls(("postMessage", {"text": "Late", "reasoning": "r"})))
        model.script(held)
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        with (
            AppServer(slack, model, tmp_path / "a", DATABASE_URL=postgres_url) as running,
            AppServer(slack, model, tmp_path / "b", DATABASE_URL=postgres_url) as told,
        ):
            event = say(slack, "think it over")
            assert post(running, event) == 200
            held.wait_reached(timeout=TIMEOUT)
            stop = slack.agents.press_stop(event["channel"], event["ts"])
            assert post(told, stop) == 200
            wait_session(slack, event, "active")
            held.release()
            # The holder's trace prints the stop's entry once it is recorded (the session may
            # be set active just before).
            running.process.stdout.wait_for("Stopped: ")
            entries, owed = stopped_log(postgres_url, thread_of(event))
            # Each process prints the entries it records: the run's holder recorded the stop.
            traces = running.process.stdout.text, told.process.stdout.text
        assert not slack.calls_to("chat.postMessage")
        assert entries[-1].startswith(f"Stopped: <@{ids.USER_ID}> pressed stop at ")
        assert owed == 0
        assert "Stopped: " in traces[0] and "Stopped: " not in traces[1]


def post(server: AppServer, event: dict) -> int:
    body, headers = signed_event_request(event)
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT)
    try:
        connection.request("POST", "/slack/events", body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()
