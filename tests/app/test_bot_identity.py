"""An event is recorded and acknowledged whatever Slack's Web API does: the bot's identity
(`auth.test`) is learned once and kept, never asked for on every request
(assistant/slack/bot_identity.py)."""

from __future__ import annotations

import logging

import pytest

from assistant.fakes.slack.faults import DROPPED
from tests.harness import mention, script_answers, thread_of

# How events are handled, not served: the Bolt tier (tests/bolt_tier.py).
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


def test_a_dropped_auth_test_does_not_fail_the_event(app, slack, model):
    slack.outage("auth.test", status=DROPPED)
    script_answers(model)
    event = mention(slack, "hello")
    assert app.send_event(event).status == 200
    app.wait_handled()
    assert app.log(thread_of(event))[1]["role"] == "user"
