"""An approval asked in one `assistant serve` process and clicked in another, on PostgreSQL
(the approvals in process: tests/app/test_mcp_approvals.py)."""

from __future__ import annotations

import http.client
import json

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from assistant.fakes.events.panel import button_click, signed_interaction_request
from assistant.fakes.openai import responses as replies
from assistant.run.approvals.entries import ALLOW
from bench.server import AppServer
from context.storage import open_store
from tests.app.test_mcp_approvals import (
    ANSWER,
    CANCEL,
    approval_message,
    finished,
    shown,
    texts,
)

# The module's fixture: its MCP server on loopback, in this process.
from tests.app.test_mcp_approvals import shop_server as shop_server
from tests.harness import TIMEOUT, thread_of, wait_session
from tests.harness import mention as say
from tests.processes.test_stop_elsewhere import post


def test_a_click_in_another_process_resumes_the_run_on_postgresql(
    postgres_url, shop_server, tmp_path
):
    """The mention reaches the first process, which asks and gives the thread up; the click
    reaches the second, which records the decision and carries the call out."""
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": {"shop": {"url": shop_server.url}}}))
    with FakeSlack(agent=True) as slack, FakeOpenAI() as model:
        model.script(replies.tool_calls(CANCEL), ANSWER)
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        env = {"DATABASE_URL": postgres_url, "ASSISTANT_MCP_FILE": str(path)}
        with (
            AppServer(slack, model, tmp_path / "a", **env) as asking,
            AppServer(slack, model, tmp_path / "b", **env) as clicked,
        ):
            event = say(slack, "please cancel my order A1")
            assert post(asking, event) == 200
            message = approval_message(slack, event)
            asking.process.stdout.wait_for("Approval requested: shop__cancel_order")
            wait_session(slack, event, "suspended")
            payload = button_click(message, ALLOW, channel=ids.CHANNEL_ID)
            body, headers = signed_interaction_request(payload)
            connection = http.client.HTTPConnection("127.0.0.1", clicked.port, timeout=TIMEOUT)
            try:
                connection.request("POST", "/slack/events", body=body, headers=headers)
                assert connection.getresponse().status == 200
            finally:
                connection.close()
            clicked.process.stdout.wait_for("allowed by")
            slack.wait_for_call("chat.postMessage", where=lambda c: c.params.get("text") == "Done.")
            # The finishRequest is recorded after the post: its trace line is printed once it is
            # in the store, with the thread's answered_through.
            clicked.process.stdout.wait_for("✅ finishRequest")
            store = open_store(postgres_url)
            try:
                log = [e.as_dict() for e in store.entries(thread_of(event))]
                owed = store.pending(thread_of(event))
            finally:
                store.close()
        system = texts(log)
        assert any(t.endswith("Order A1 cancelled") for t in system)
        assert finished(log) and owed == []
        assert "Allowed by" in shown(slack, message)
