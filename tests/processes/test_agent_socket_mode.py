"""Agent sessions and thinking steps over Socket Mode (issue 23): `assistant run` as a real
process, the events in `events_api` envelopes, as tests/app/test_agent_sessions.py and
tests/app/test_steps.py check them over HTTP."""

from __future__ import annotations

import signal

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from tests.app.test_steps import HISTORY, cards
from tests.app.test_stop_button import FINISH, post
from tests.app.test_streaming import bot_messages
from tests.harness import mention as say
from tests.harness import wait_session
from tests.process import TIMEOUT, AssistantProcess
from tests.processes.test_socket_mode import socket_env


def test_sessions_and_task_cards_over_socket_mode(slack, model, tmp_path):
    """A run that reads the thread: its session `processing` before any other call of the
    run, the card `in_progress` then `complete`, then the answer, the session `active` after;
    a run whose model fails leaves `processing` too."""
    slack.agents.agent = True
    model.script(replies.tool_calls(HISTORY), replies.tool_calls(post("We chose noodles."), FINISH))
    env = socket_env(slack, model, tmp_path, ASSISTANT_STREAM="auto")
    with AssistantProcess("run", env=env, cwd=tmp_path) as app:
        slack.wait_connected(timeout=TIMEOUT)
        asked = say(slack, "what did we decide?")
        before = len(slack.calls)
        slack.wait_for_ack(slack.send_event(asked), timeout=TIMEOUT)
        wait_session(slack, asked, "active", timeout=TIMEOUT)
        run = [call.method for call in slack.calls[before:]]

        model.script(replies.error(500))
        failing = say(slack, "and tomorrow?")
        slack.wait_for_ack(slack.send_event(failing), timeout=TIMEOUT)
        wait_session(slack, failing, "active", timeout=TIMEOUT)
        code = app.stop(signal.SIGTERM)

    assert code == 0, app.stderr.text
    assert "Traceback" not in app.stderr.text
    session = slack.agents.session(asked["channel"], asked["ts"])
    # `processing` until the run ended: the cards' stream was stopped saying so.
    assert session.statuses[0] == "processing" and session.statuses[-1] == "active"
    assert "active" not in session.statuses[:-1]
    assert (session.title, session.initiator) == ("what did we decide?", ids.USER_ID)
    assert run.index("agents.sessions.setStatus") < run.index("chat.startStream")
    (start,) = [
        c for c in slack.calls_to("chat.startStream") if c.params["thread_ts"] == asked["ts"]
    ]
    assert cards(slack, start.response["ts"]) == [
        ("entry-2", "Reading the thread", "in_progress"),
        ("entry-2", "Reading the thread", "complete"),
    ]
    assert "We chose noodles." in [m["text"] for m in bot_messages(slack, asked)]

    assert slack.agents.session(failing["channel"], failing["ts"]).statuses == [
        "processing",
        "active",
    ]
    (sorry,) = [
        c for c in slack.calls_to("chat.postMessage") if c.params["thread_ts"] == failing["ts"]
    ]
    assert "Sorry" in sorry.params["text"]


def test_refused_sessions_fall_back_to_the_reaction_over_socket_mode(slack, model, tmp_path):
    """The fake app is not declared as an agent: Slack refuses once, the process says so in
    one line of its log, and the workspace's runs show the :eyes: reaction instead."""
    model.script(
        replies.tool_calls(post("Risotto."), FINISH), replies.tool_calls(post("Soup."), FINISH)
    )
    with AssistantProcess("run", env=socket_env(slack, model, tmp_path), cwd=tmp_path) as app:
        slack.wait_connected(timeout=TIMEOUT)
        for text in ("lunch?", "and dinner?"):
            event = say(slack, text)
            slack.wait_for_ack(slack.send_event(event), timeout=TIMEOUT)
            slack.wait_for_call(
                "reactions.remove",
                timeout=TIMEOUT,
                where=lambda c, e=event: c.params["timestamp"] == e["ts"],
            )
        code = app.stop(signal.SIGTERM)

    assert code == 0, app.stderr.text
    refused = slack.calls_to("agents.sessions.setStatus")
    assert [call.response["error"] for call in refused] == ["not_authorized"]
    assert len(slack.calls_to("reactions.add")) == 2
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == ["Risotto.", "Soup."]
    lines = [line for line in app.stderr.text.splitlines() if "refused agent sessions" in line]
    assert len(lines) == 1 and "not_authorized" in lines[0] and ids.TEAM_ID in lines[0]
