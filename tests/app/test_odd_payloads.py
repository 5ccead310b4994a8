"""Signed but odd payloads (issue 21, point 8), through the real app over HTTP: each is
answered 200 or 400 with exactly one log line and no traceback, and records only what is not
odd; a feedback click counts only from someone who can see the thread."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from assistant.fakes import ids
from assistant.fakes import requests as event_requests
from assistant.fakes.events.panel import feedback_click, open_panel, signed_interaction_request
from assistant.fakes.openai import responses as replies
from assistant.fakes.requests import sign
from context.storage import ThreadKey, Vote
from tests.harness import RunningApp, mention, thread_of

STRANGER = "U0STRANGR1"  # in the workspace, not in the conversation


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every log record, uvicorn's too (its loggers do not propagate: an ASGI app's exception
    is logged there)."""
    server = logging.getLogger("uvicorn.error")
    server.addHandler(caplog.handler)
    caplog.set_level(logging.INFO)
    yield caplog
    server.removeHandler(caplog.handler)


def one_line(logs: pytest.LogCaptureFixture, *about: str) -> str:
    """The one warning or error logged since the last `clear`, with no traceback (besides
    the legacy view's, said once per process by whichever test sends a panel event first)."""
    shown = [
        r
        for r in logs.records
        if r.levelno >= logging.WARNING and r.name != "assistant.panel.legacy_view"
    ]
    assert "Traceback" not in logs.text
    assert [r.getMessage() for r in shown if r.exc_info or r.exc_text] == []
    assert len(shown) == 1, [r.getMessage() for r in shown]
    message = shown[0].getMessage()
    assert "\n" not in message
    for part in about:
        assert part in message, message
    return message


def post(app: RunningApp, payload: dict[str, Any]) -> int:
    body, headers = signed_interaction_request(payload)
    return app.request("POST", "/slack/events", body, headers).status


def answered(app: RunningApp, slack, model) -> tuple[ThreadKey, dict[str, Any], int]:
    """A channel mention answered: its thread, the answer's Slack message, its entry."""
    model.script(
        replies.tool_calls(("postMessage", {"text": "Pizza.", "reasoning": "answer"})),
        replies.finish_request(),
    )
    event = mention(slack, "lunch?")
    assert app.send_event(event).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_handled()
    key = thread_of(event)
    reply = slack.calls_to("chat.postMessage")[-1]
    index = next(e["index"] for e in app.log(key) if e["role"] == "assistant")
    return key, slack.store.get(key.channel, reply.response["ts"]), index


def odd_actions(payload: dict[str, Any], kind: str) -> None:
    action = payload["actions"][0]
    payload["actions"] = {
        "not-a-list": action,
        "empty": [],
        "a-string": "answer_feedback",
        "a-list-of-strings": ["answer_feedback"],
    }[kind]


@pytest.mark.parametrize("kind", ["not-a-list", "empty", "a-string", "a-list-of-strings"])
def test_block_actions_whose_actions_are_odd_are_answered_with_one_line(
    app, slack, model, logs, kind
):
    key, message, _ = answered(app, slack, model)
    before = app.log(key)
    payload = feedback_click(message, positive=True, channel=key.channel)
    odd_actions(payload, kind)
    logs.clear()

    assert post(app, payload) in (200, 400)
    app.wait_handled()
    one_line(logs, "actions")
    assert app.log(key) == before
    assert app.assistant.store.votes(key) == []


@pytest.mark.parametrize(
    "where", ["click-team", "click-user", "click-channel", "event-team", "event-enterprise"]
)
def test_ids_of_a_shape_bolt_cannot_read_are_refused_with_one_line(app, slack, model, logs, where):
    key, message, _ = answered(app, slack, model)
    before = app.log(key)
    click = feedback_click(message, positive=True, channel=key.channel)
    event = event_requests.event_callback(mention(slack, "and dessert?"))
    sent = {
        "click-team": lambda: post(app, {**click, "team": 5}),
        "click-user": lambda: post(app, {**click, "user": 5}),
        "click-channel": lambda: post(app, {**click, "channel": 5}),
        "event-team": lambda: app.send_event(event, payload={**event, "team": 5}).status,
        "event-enterprise": lambda: (
            app.send_event(event, payload={**event, "enterprise": 5}).status
        ),
    }[where]
    asked = len(model.requests)
    logs.clear()

    assert sent() == 400
    app.wait_handled()
    one_line(logs, "400")
    assert app.log(key) == before
    assert len(model.requests) == asked


@pytest.mark.parametrize("form", ["json", "form"])
def test_a_signed_body_nested_too_deep_is_refused_with_one_line(app, slack, model, logs, form):
    deep = "[" * 100_000 + "]" * 100_000
    if form == "json":
        body = ('{"type": "event_callback", "event": ' + deep + "}").encode()
        content_type = "application/json"
    else:
        body = ("payload=" + "%5B" * 100_000 + "%5D" * 100_000).encode()
        content_type = "application/x-www-form-urlencoded"
    headers = {"Content-Type": content_type, **sign(body)}
    logs.clear()

    assert app.request("POST", "/slack/events", body, headers).status == 400
    one_line(logs, "400")
    assert app.assistant.store.threads() == []
    answered(app, slack, model)  # and the app goes on


@pytest.mark.parametrize("value", ["good:99999999999999999999", "bad:2147483648", "good:-1"])
def test_a_feedback_value_naming_no_possible_entry_is_answered_with_one_line(
    app, slack, model, logs, value
):
    key, message, _ = answered(app, slack, model)
    before = app.log(key)
    payload = feedback_click(message, positive=True, channel=key.channel)
    payload["actions"][0]["value"] = value
    logs.clear()

    assert post(app, payload) == 200
    app.wait_handled()
    one_line(logs, "feedback")
    assert app.log(key) == before
    assert app.assistant.store.votes(key) == []


def test_a_click_from_someone_who_cannot_see_the_thread_is_not_a_vote(app, slack, model, logs):
    slack.conversations.private(ids.CHANNEL_ID, [ids.USER_ID], name="team")
    key, message, index = answered(app, slack, model)
    before = app.log(key)
    logs.clear()

    stranger = feedback_click(message, positive=False, channel=key.channel, user=STRANGER)
    assert post(app, stranger) == 200
    app.wait_handled()
    one_line(logs, "feedback", STRANGER, "cannot see")
    assert app.log(key) == before
    assert app.assistant.store.votes(key) == []

    # A member's click is a vote.
    assert post(app, feedback_click(message, positive=True, channel=key.channel)) == 200
    app.wait_handled()
    assert app.assistant.store.votes(key) == [Vote(index, f"<@{ids.USER_ID}>", "good")]


def test_in_a_public_channel_anyone_of_the_workspace_may_vote(app, slack, model):
    key, message, index = answered(app, slack, model)  # the fake's default channel: public
    click = feedback_click(message, positive=True, channel=key.channel, user=STRANGER)
    assert post(app, click) == 200
    app.wait_handled()
    assert app.assistant.store.votes(key) == [Vote(index, f"<@{STRANGER}>", "good")]


@pytest.mark.parametrize("user", ["U0\x1b[2JX", "U0/../X", "U" + "1" * 65])
def test_a_click_by_an_id_that_is_not_one_is_not_a_vote(app, slack, model, logs, user):
    key, message, _ = answered(app, slack, model)  # in a public channel: anyone may vote
    before = app.log(key)
    logs.clear()

    assert post(app, feedback_click(message, positive=True, channel=key.channel, user=user)) == 200
    app.wait_handled()
    one_line(logs, "feedback")
    assert app.log(key) == before
    assert app.assistant.store.votes(key) == []


def test_a_click_slack_cannot_say_is_visible_is_not_a_vote(app, slack, model, logs):
    key, message, _ = answered(app, slack, model)
    slack.conversations.private(ids.CHANNEL_ID, [ids.USER_ID], bot=False)  # the bot left
    logs.clear()

    assert post(app, feedback_click(message, positive=True, channel=key.channel)) == 200
    app.wait_handled()
    one_line(logs, "feedback", "channel_not_found")
    assert app.assistant.store.votes(key) == []


ODD_IDS = ["D0\x1b[31mX", "D0\x07BELL", "D0/../X", "D" + "1" * 65, ""]


@pytest.mark.parametrize("channel", ODD_IDS, ids=["esc", "bel", "slash", "too-long", "empty"])
def test_panel_events_with_ids_message_events_refuse_are_not_recorded(app, slack, logs, channel):
    started = open_panel(slack, channel=channel)
    assert app.send_event(started).status == 200
    app.wait_handled()
    one_line(logs, "assistant_thread.channel_id", "not recorded")
    assert app.assistant.store.threads() == []
    assert slack.calls_to("chat.postMessage") == []  # nobody greeted

    logs.clear()
    changed = json.loads(json.dumps(started))
    changed["type"] = "assistant_thread_context_changed"
    assert app.send_event(changed).status == 200
    app.wait_handled()
    one_line(logs, "assistant_thread.channel_id", "not recorded")
    assert app.assistant.store.threads() == []


@pytest.mark.parametrize("field", ["user_id", "thread_ts"])
def test_panel_events_with_odd_people_or_ts_are_not_recorded(app, slack, logs, field):
    started = open_panel(slack)
    started["assistant_thread"][field] = "U0\x1b]8;;x\x07" if field == "user_id" else "1/2"
    assert app.send_event(started).status == 200
    app.wait_handled()
    one_line(logs, f"assistant_thread.{field}", "not recorded")
    assert app.assistant.store.threads() == []


def test_a_panel_opened_from_an_odd_channel_is_recorded_without_it(app, slack, logs):
    started = open_panel(slack, viewing="C0\x1b[2J/..")
    assert app.send_event(started).status == 200
    app.wait_handled()
    one_line(logs, "assistant_thread.context.channel_id", "without")
    thread = started["assistant_thread"]
    key = ThreadKey(ids.TEAM_ID, thread["channel_id"], thread["thread_ts"])
    contents = [entry["content"] for entry in app.log(key)]
    assert f"<@{ids.USER_ID}> opened the assistant panel." in contents
    assert "\x1b" not in json.dumps(contents)
    assert len(slack.calls_to("chat.postMessage")) == 1  # greeted all the same
