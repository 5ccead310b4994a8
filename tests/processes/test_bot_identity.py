"""A real `assistant serve` records and acknowledges events while Slack's Web API is
unreachable (assistant/slack/bot_identity.py; in process: tests/app/test_bot_identity.py)."""

from __future__ import annotations

import http.client
import signal

from assistant.fakes.requests import event_callback, signed_event_request
from context.storage import open_store
from tests.harness import mention, script_answers, thread_of
from tests.process import TIMEOUT, AssistantProcess
from tests.processes.test_socket_mode import free_port, serve_env


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
