"""Agent sessions (issue 23): while a run works its thread's session is `processing`, set
before any other Slack call of the run, and `active` again however the run ends; where Slack
refuses sessions, progress is shown as before (the :eyes: reaction), the refusal remembered
per workspace with one log line."""

from __future__ import annotations

import logging

import pytest

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from tests.harness import mention as say
from tests.harness import script_answers, thread_of, wait_session

# How events are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

ASKED = "what is for lunch today?"


def run_methods(slack, since: int) -> list[str]:
    return [call.method for call in slack.calls[since:]]


def test_a_run_sets_its_session_processing_first_and_active_after(app, slack, model):
    slack.agents.agent = True
    script_answers(model)
    event = say(slack, ASKED)
    before = len(slack.calls)
    assert app.send_event(event).status == 200
    wait_session(slack, event, "active")
    app.wait_idle()

    session = slack.agents.session(event["channel"], event["ts"])
    assert session is not None
    assert session.statuses == ["processing", "active"]
    assert session.title == ASKED  # the thread's first message, as recorded
    assert session.initiator == ids.USER_ID
    methods = run_methods(slack, before)
    # The session before anything else the run shows; no reaction besides it.
    assert methods.index("agents.sessions.setStatus") < methods.index("chat.postMessage")
    assert methods[-1] == "agents.sessions.setStatus"
    assert "reactions.add" not in methods and "reactions.remove" not in methods
    assert app.log(thread_of(event))[-1]["content"]["toolCall"] == "finishRequest"


def test_a_failed_run_leaves_processing_too(app, slack, model):
    slack.agents.agent = True
    model.script(replies.error(500))
    event = say(slack, ASKED)
    assert app.send_event(event).status == 200
    wait_session(slack, event, "active")
    app.wait_idle()

    assert slack.agents.session(event["channel"], event["ts"]).statuses == [
        "processing",
        "active",
    ]
    last = app.log(thread_of(event))[-1]
    assert last["content"].startswith("Error: the model call failed")
    assert "Sorry" in slack.calls_to("chat.postMessage")[-1].params["text"]


def test_where_slack_refuses_sessions_the_reaction_shows_progress(app, slack, model, caplog):
    """The fake app is not declared as an agent: Slack answers not_authorized once; the
    workspace's later runs do not ask again."""
    caplog.set_level(logging.WARNING, logger="assistant.run.core.sessions")
    script_answers(model, 2)
    first = say(slack, ASKED)
    second = say(slack, "and tomorrow?")
    for event in (first, second):
        assert app.send_event(event).status == 200
        slack.wait_for_call(
            "reactions.remove", where=lambda c, e=event: c.params["timestamp"] == e["ts"]
        )
        app.wait_idle()

    refused = slack.calls_to("agents.sessions.setStatus")
    assert [call.response["error"] for call in refused] == ["not_authorized"]
    assert len(slack.calls_to("reactions.add")) == 2
    assert len(slack.calls_to("chat.postMessage")) == 2
    lines = [r.getMessage() for r in caplog.records if r.name == "assistant.run.core.sessions"]
    assert len(lines) == 1 and "not_authorized" in lines[0] and ids.TEAM_ID in lines[0]


def test_a_slack_without_sessions_falls_back_too(app, slack, model):
    slack.fail("agents.sessions.setStatus", "unknown_method", times=1)
    script_answers(model)
    event = say(slack, ASKED)
    assert app.send_event(event).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    assert [c.response.get("error") for c in slack.calls_to("agents.sessions.setStatus")] == [
        "unknown_method"
    ]
    assert len(slack.calls_to("chat.postMessage")) == 1


def test_a_streamed_run_keeps_its_session_processing_until_it_ends(make_app, slack, model):
    """Slack's chat.stopStream sets the session `active` unless told otherwise: the streams a
    run stops on its way (its cards', its posts') say `processing`, so the stop button stays
    until the run ends."""
    slack.agents.agent = True
    app = make_app(assistant_stream="auto")
    model.script(
        replies.tool_calls(("getThreadHistory", {"reasoning": "context"})),
        replies.tool_calls(
            ("postMessage", {"text": "First, the noodle bar.", "reasoning": "one"}),
            ("postMessage", {"text": "Then, the park.", "reasoning": "two"}),
            ("finishRequest", {"reasoning": "done"}),
        ),
    )
    event = say(slack, ASKED)
    assert app.send_event(event).status == 200
    wait_session(slack, event, "active")
    app.wait_idle()

    statuses = slack.agents.session(event["channel"], event["ts"]).statuses
    assert statuses[0] == "processing" and statuses[-1] == "active"
    assert "active" not in statuses[:-1]
    stops = slack.calls_to("chat.stopStream")
    assert stops and all(c.params.get("session_status") == "processing" for c in stops)


def test_an_app_not_subscribed_to_the_stop_event_is_told_once(app, slack, model, caplog):
    """Slack warns on setStatus while the app is not subscribed to agent_session_stopped (its
    stop button would do nothing): one line per workspace, and sessions go on."""
    caplog.set_level(logging.WARNING, logger="assistant.run.core.sessions")
    slack.agents.agent = True
    slack.agents.subscribed = False
    script_answers(model, 2)
    for text in (ASKED, "and tomorrow?"):
        event = say(slack, text)
        assert app.send_event(event).status == 200
        wait_session(slack, event, "active")
        app.wait_idle()

    assert all(c.response.get("warning") for c in slack.calls_to("agents.sessions.setStatus"))
    lines = [r.getMessage() for r in caplog.records if r.name == "assistant.run.core.sessions"]
    assert len(lines) == 1 and "agent_session_stopped" in lines[0] and ids.TEAM_ID in lines[0]
    assert len(slack.calls_to("chat.postMessage")) == 2
