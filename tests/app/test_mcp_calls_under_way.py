"""A call of an MCP server's tool while it is under way, end to end: the SDK's own server on
loopback, the app in process (the Bolt tier), the fake Slack and model. The server's progress
shows on the call's task card (not in the log); the stop button cancels the call (the server
sees it cancelled) and the log records it."""

from __future__ import annotations

import json

import pytest

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from assistant.run.progress import step_cards
from tests.app.test_approval_stops import stop
from tests.harness import TIMEOUT, answered_log, thread_of
from tests.harness import mention as say
from tests.mcp_servers import ShopServer
from tests.mcp_servers.busy import CANCELLED, HANGING, busy

pytestmark = pytest.mark.listeners


@pytest.fixture
def busy_server():
    CANCELLED.clear()
    HANGING.clear()
    server = ShopServer(server=busy).start()
    yield server
    server.stop()


def busy_app(make_app, busy_server, tmp_path, **settings):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": {"busy": {"url": busy_server.url}}}))
    return make_app(assistant_mcp_file=str(path), assistant_stream="auto", **settings)


@pytest.mark.parametrize("seconds", [3600.0, 0.0])
def test_progress_shows_on_the_calls_card_at_a_bounded_rate_and_is_no_entry(
    make_app, slack, model, busy_server, tmp_path, monkeypatch, seconds
):
    # The rate is set, not timed: all three notifications within PROGRESS_SECONDS, or none.
    monkeypatch.setattr(step_cards, "PROGRESS_SECONDS", seconds)
    app = busy_app(make_app, busy_server, tmp_path)
    model.script(
        replies.tool_calls(("busy__count", {"steps": 3, "reasoning": "count"})),
        replies.tool_calls(
            ("postMessage", {"text": "Counted.", "reasoning": "answer"}),
            ("finishRequest", {"reasoning": "done"}),
        ),
    )
    event = say(slack, "count to three")
    log = answered_log(app, slack, event)

    assert log[3]["content"].endswith("\ncounted to 3")
    assert not any("step 1 of 3" in json.dumps(e["content"]) for e in log)
    (message,) = [m for m in slack.thread(ids.CHANNEL_ID, event["ts"]) if m.get("bot_id")]
    timeline = slack.streams.timelines[(ids.CHANNEL_ID, message["ts"])]
    shown = [
        (c["title"], c["status"], c.get("details")) for c in timeline if c["type"] == "task_update"
    ]
    assert shown[0] == ("Calling busy__count", "in_progress", None)
    assert shown[-1] == ("Calling busy__count", "complete", None)
    told = [details for title, status, details in shown[1:-1] if status == "in_progress"]
    everything = ["33% · step 1 of 3", "67% · step 2 of 3", "100% · step 3 of 3"]
    if seconds:  # within PROGRESS_SECONDS of the first, the others are not shown
        assert told == everything[:1]
    else:  # any, in order: one told while the one before it is being sent is dropped
        assert told[0] == everything[0] and told == sorted(told, key=everything.index)


def test_the_stop_button_cancels_the_call_under_way(make_app, slack, model, busy_server, tmp_path):
    slack.agents.agent = True
    app = busy_app(make_app, busy_server, tmp_path)
    model.script(replies.tool_calls(("busy__hang", {"reasoning": "wait"})))
    event = say(slack, "wait for it")
    assert app.send_event(event).status == 200
    assert HANGING.wait(TIMEOUT)

    stop(app, slack, event)
    assert CANCELLED.wait(TIMEOUT)  # the server was told, and stopped the call
    system = [e["content"] for e in app.log(thread_of(event)) if e["role"] == "system"]
    assert system[-2] == (
        f"Error: busy__hang (entry 2) failed: the outcome is unknown (<@{ids.USER_ID}> pressed "
        "stop during the call, and it was cancelled if still under way); it was not called again"
    )
    assert system[-1].startswith(f"Stopped: <@{ids.USER_ID}> pressed stop at ")
