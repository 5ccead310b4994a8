"""A question an MCP server asks during a call (MCP's elicitation), end to end: the SDK's own
server on loopback (tests/mcp_servers/busy.py, whose tools echo the answer they got), the app
in process (the Bolt tier), the fake Slack and model. The person asked answers from the thread's
message and its form; the answer reaches the server, and the log records the question and the
answer (docs/slack-features.md#questions-from-tools)."""

from __future__ import annotations

import json

import pytest

from assistant.fakes import ids
from assistant.fakes.events.home import view_submission
from assistant.fakes.events.panel import button_click
from assistant.fakes.openai import responses as replies
from assistant.run.tools.questions import DECLINE, DONE, FILL_IN, FORM, OPEN
from tests.app.test_approval_stops import stop
from tests.app.test_channel_settings import interact
from tests.app.test_mcp_approvals import BOB, finished, texts, wait_log
from tests.harness import mention as say
from tests.harness import thread_of
from tests.mcp_servers import ShopServer
from tests.mcp_servers.busy import busy

pytestmark = pytest.mark.listeners

VERSIONS = {"2026-07-28": False, "2025-11-25": True}  # version -> served as a legacy server
FILLED = {
    "f0": {"type": "plain_text_input", "value": "Tea <b>"},
    "f1": {"type": "number_input", "value": "3"},
    "f2": {"type": "number_input", "value": "4.5"},
    "f3": {"type": "static_select", "selected_option": {"value": "true"}},
    "f4": {"type": "static_select", "selected_option": {"value": "M"}},
}


def server(legacy: bool = False):
    return ShopServer(server=busy, legacy=legacy).start()


def question_app(make_app, busy_server, tmp_path, **settings):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": {"busy": {"url": busy_server.url}}}))
    return make_app(assistant_mcp_file=str(path), **settings)


def asked(app, slack, model, event, tool: str) -> dict:
    """The run calls `tool`, whose server asks; the question's message as posted."""
    model.script(
        replies.tool_calls((f"busy__{tool}", {"reasoning": "ask"})),
        replies.tool_calls(
            ("postMessage", {"text": "Done.", "reasoning": "answer"}),
            ("finishRequest", {"reasoning": "done"}),
        ),
    )
    assert app.send_event(event).status == 200
    (call,) = slack.wait_for_call(
        "chat.postMessage",
        where=lambda c: c.params.get("thread_ts") == event["ts"] and "blocks" in c.params,
    )
    return call.response["message"]


def press(app, slack, message, action_id: str, user: str = ids.USER_ID) -> None:
    payload = button_click(message, action_id, channel=ids.CHANNEL_ID, user=user)
    payload["trigger_id"] = slack.issue_trigger()  # one Slack gave: a form opens
    status, _ = interact(app, payload)
    assert status == 200
    app.wait_listeners()


def fill_in(app, slack, message) -> dict:
    """Fill in pressed by the person asked: the form opened."""
    before = len(slack.modals)
    press(app, slack, message, FILL_IN)
    assert len(slack.modals) == before + 1
    return slack.modals[-1]


def send(app, slack, form, values, user: str = ids.USER_ID) -> dict:
    status, body = interact(app, view_submission(slack, form, values, user=user))
    assert status == 200
    app.wait_listeners()
    return body


def result_of(log: list[dict], tool: str) -> str:
    return next(t for t in texts(log) if t.startswith(f"Result of busy__{tool}"))


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_a_form_accepted_gives_the_server_every_kind_of_field(
    make_app, slack, model, tmp_path, version
):
    busy_server = server(VERSIONS[version])
    try:
        app = question_app(make_app, busy_server, tmp_path)
        event = say(slack, "order for me")
        message = asked(app, slack, model, event, "order")
        assert [b["action_id"] for b in message["blocks"][1]["elements"]] == [FILL_IN, DECLINE]
        form = fill_in(app, slack, message)
        assert form["callback_id"] == FORM
        kinds = [b["element"]["type"] for b in form["blocks"] if b["type"] == "input"]
        assert kinds == [
            "plain_text_input",
            "number_input",
            "number_input",
            "static_select",
            "static_select",
            "plain_text_input",
        ]
        inputs = [b for b in form["blocks"] if b["type"] == "input"]
        assert [b["optional"] for b in inputs] == [False] * 5 + [True]
        assert (
            inputs[1]["element"]["min_value"] == "1" and inputs[1]["element"]["max_value"] == "10"
        )
        assert send(app, slack, form, FILLED) == {}  # closed
        log = wait_log(app, event, finished)
        app.wait_idle()
    finally:
        busy_server.stop()
    got = {"count": 3, "gift": True, "item": "Tea <b>", "note": None, "price": 4.5, "size": "M"}
    assert result_of(log, "order").endswith("\naccept " + json.dumps(got, sort_keys=True))
    system = texts(log)
    question = next(t for t in system if t.startswith("Question from the MCP server busy"))
    assert question.startswith(
        f"Question from the MCP server busy during busy__order (entry 2) to <@{ids.USER_ID}>: "
        "What should I order?\nFields: item (string, required), count (integer, required), "
    )
    answer = next(t for t in system if t.startswith("Answer to the question of entry 2"))
    assert answer.startswith(f"Answer to the question of entry 2: accepted by <@{ids.USER_ID}>: ")
    # The message says who answered, and no button is left.
    shown = slack.store.get(ids.CHANNEL_ID, message["ts"])
    assert "actions" not in json.dumps(shown["blocks"])
    assert f"Answered by <@{ids.USER_ID}>." in shown["text"]


def test_decline_goes_back_as_decline(make_app, slack, model, tmp_path):
    busy_server = server()
    try:
        app = question_app(make_app, busy_server, tmp_path)
        event = say(slack, "order for me")
        message = asked(app, slack, model, event, "order")
        press(app, slack, message, DECLINE)
        log = wait_log(app, event, finished)
        app.wait_idle()
    finally:
        busy_server.stop()
    assert result_of(log, "order").endswith("\ndecline")
    assert f"Answer to the question of entry 2: declined by <@{ids.USER_ID}>" in texts(log)


def test_someone_else_cannot_answer_and_an_invalid_number_shows_its_error(
    make_app, slack, model, tmp_path
):
    slack.add_user(BOB, "bob")
    slack.conversations.public(ids.CHANNEL_ID, [ids.USER_ID, BOB], name="general")
    busy_server = server()
    try:
        app = question_app(make_app, busy_server, tmp_path)
        event = say(slack, "order for me")
        message = asked(app, slack, model, event, "order")
        before = len(slack.modals)
        press(app, slack, message, FILL_IN, user=BOB)  # not theirs: no form, a note
        assert len(slack.modals) == before
        assert slack.ephemerals[-1]["user"] == BOB
        assert f"Only <@{ids.USER_ID}> can answer this." in slack.ephemerals[-1]["text"]
        press(app, slack, message, DECLINE, user=BOB)  # nor decline it

        form = fill_in(app, slack, message)
        send(app, slack, form, FILLED, user=BOB)  # a form sent as someone else: refused
        assert slack.ephemerals[-1]["user"] == BOB
        wrong = {**FILLED, "f1": {"type": "number_input", "value": "11"}}
        body = send(app, slack, form, wrong)
        assert body == {"response_action": "errors", "errors": {"f1": "At most 10."}}
        body = send(app, slack, form, {**FILLED, "f1": {"type": "number_input", "value": "2.5"}})
        assert body["errors"] == {"f1": "Not a whole number."}
        assert not any(
            t.startswith("Answer to the question") for t in texts(app.log(thread_of(event)))
        )
        send(app, slack, form, FILLED)
        log = wait_log(app, event, finished)
        app.wait_idle()
    finally:
        busy_server.stop()
    assert '"count": 3' in result_of(log, "order")
    assert f"accepted by <@{ids.USER_ID}>" in next(
        t for t in texts(log) if t.startswith("Answer to the question")
    )


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_the_stop_button_cancels_the_question_and_the_call(
    make_app, slack, model, tmp_path, version
):
    slack.agents.agent = True
    busy_server = server(VERSIONS[version])
    try:
        app = question_app(make_app, busy_server, tmp_path)
        event = say(slack, "order for me")
        message = asked(app, slack, model, event, "order")
        stop(app, slack, event)
        log = wait_log(app, event, lambda log: any(t.startswith("Stopped: ") for t in texts(log)))
        app.wait_idle()
        slack.wait_for_call("chat.update", where=lambda c: c.params.get("ts") == message["ts"])
        press(app, slack, message, DECLINE)  # too late: the person is told
    finally:
        busy_server.stop()
    system = texts(log)
    assert system[-1].startswith(f"Stopped: <@{ids.USER_ID}> pressed stop at ")
    assert not any(t.startswith("Result of busy__order") for t in system)
    assert slack.ephemerals[-1]["text"] == "This question no longer waits."
    assert "actions" not in json.dumps(slack.store.get(ids.CHANNEL_ID, message["ts"])["blocks"])


def test_no_answer_in_time_is_a_cancel(make_app, slack, model, tmp_path):
    busy_server = server()
    try:
        app = question_app(make_app, busy_server, tmp_path, assistant_mcp_elicitation_seconds=0.01)
        event = say(slack, "order for me")
        asked(app, slack, model, event, "order")
        log = wait_log(app, event, finished)
        app.wait_idle()
    finally:
        busy_server.stop()
    assert result_of(log, "order").endswith("\ncancel")
    assert (
        "Answer to the question of entry 2: cancelled: no answer within 0.01 s "
        "(ASSISTANT_MCP_ELICITATION_SECONDS)"
    ) in texts(log)


@pytest.mark.parametrize("button", [DONE, DECLINE])
def test_a_page_to_open_is_a_link_button_then_done_or_decline(
    make_app, slack, model, tmp_path, button
):
    busy_server = server(legacy=True)  # the SDK's server asks a URL only mid-call
    try:
        app = question_app(make_app, busy_server, tmp_path)
        event = say(slack, "pay for it")
        message = asked(app, slack, model, event, "pay")
        link, done, decline = message["blocks"][1]["elements"]
        assert link["action_id"] == OPEN
        assert link["url"] == "https://pay.example.com/checkout?order=7"
        assert link["text"]["text"] == "Open pay.example.com"
        assert (done["action_id"], decline["action_id"]) == (DONE, DECLINE)
        press(app, slack, message, button)
        log = wait_log(app, event, finished)
        app.wait_idle()
    finally:
        busy_server.stop()
    action = "accept" if button == DONE else "decline"
    assert result_of(log, "pay").endswith(f"\npaid: {action}")
    question = next(t for t in texts(log) if t.startswith("Question from the MCP server"))
    assert question.endswith("\nTo open: https://pay.example.com/checkout?order=7")
