"""Model failures leave a correct log, one human message when needed, and a working process."""

from __future__ import annotations

import logging
import socket

import pytest

from assistant.fakes.openai import responses as replies
from assistant.run.loop.apologies import SORRY_MODEL
from tests.harness import RunningApp, thread_of
from tests.harness import mention as say

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners


ANSWER = replies.tool_calls(
    ("postMessage", {"text": "Hello.", "reasoning": "answer"}),
    ("finishRequest", {"reasoning": "done"}),
)


def answered(app: RunningApp, slack, text: str = "", event: dict | None = None) -> list[dict]:
    """Mention the bot (or send `event`) and wait for the run to end; the thread's log."""
    event = event or say(slack, text)
    before = len(slack.calls_to("reactions.remove"))
    assert app.send_event(event).status == 200
    slack.wait_for_call("reactions.remove", count=before + 1)
    app.wait_idle()
    return app.log(thread_of(event))


def still_answers(app: RunningApp, slack, model) -> None:
    """The next mention, in another thread, is answered normally."""
    model.script(
        replies.tool_calls(("postMessage", {"text": "Still here", "reasoning": "r"})),
        replies.tool_calls(("finishRequest", {"reasoning": "r"})),
    )
    log = answered(app, slack, "are you there?")
    assert [e["content"].get("toolCall") for e in log[2:]] == ["postMessage", "finishRequest"]
    assert slack.calls_to("chat.postMessage")[-1].params["text"] == "Still here"


def system_texts(log: list[dict]) -> list[str]:
    return [e["content"] for e in log if e["role"] == "system"][1:]


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        pytest.param(
            replies.error(500, times=2),
            "answered HTTP 500: The server had an error (server_error)",
            id="http-500",
        ),
        pytest.param(replies.disconnect(times=2), "could not be reached", id="dropped"),
    ],
)
def test_a_model_that_fails_on_every_retry(make_app, slack, model, fault, reason):
    app = make_app(openai_max_retries=1)
    model.script(fault)
    log = answered(app, slack, "hello")
    assert [e["role"] for e in log] == ["system", "user", "system"]
    assert system_texts(log) == [
        f"Error: the model call failed: the model service {reason}. "
        f'The user was told: "{SORRY_MODEL.english()}"'
    ]
    assert len(model.requests) == 2
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == [SORRY_MODEL.english()]
    still_answers(app, slack, model)


def script_one_answer(model) -> None:
    model.script(
        replies.tool_calls(("postMessage", {"text": "Here you go", "reasoning": "r"})),
        replies.tool_calls(("finishRequest", {"reasoning": "r"})),
    )


def test_a_rate_limited_call_is_retried_after_retry_after(make_app, slack, model):
    app = make_app(openai_max_retries=2)  # the default
    model.script(replies.rate_limited(retry_after=1))
    script_one_answer(model)
    log = answered(app, slack, "hello")
    assert system_texts(log) == []
    assert [e["content"].get("toolCall") for e in log[2:]] == ["postMessage", "finishRequest"]
    assert len(model.requests) == 3  # the refused call, then one per step
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == ["Here you go"]
    still_answers(app, slack, model)


def test_a_dropped_connection_is_retried(make_app, slack, model):
    app = make_app(openai_max_retries=2)
    model.script(replies.disconnect())
    script_one_answer(model)
    log = answered(app, slack, "hello")
    assert system_texts(log) == []
    assert len(model.requests) == 3
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == ["Here you go"]
    still_answers(app, slack, model)


def test_a_model_that_does_not_answer_in_time(make_app, slack, model):
    app = make_app(openai_timeout=0.5)
    hold = replies.hold()
    model.script(hold)
    log = answered(app, slack, "hello")
    assert system_texts(log) == [
        f"Error: the model call failed: the model did not answer in time. "
        f'The user was told: "{SORRY_MODEL.english()}"'
    ]
    hold.release()
    still_answers(app, slack, model)


def test_arguments_that_are_not_json_get_another_step(app, slack, model):
    model.script(
        replies.tool_calls(("postMessage", '{"text": "oops"')),
        replies.tool_calls(("postMessage", {"text": "Fixed", "reasoning": "retry"})),
        replies.tool_calls(("finishRequest", {"reasoning": "done"})),
    )
    log = answered(app, slack, "hello")
    assert log[2]["role"] == "system"
    assert log[2]["content"].startswith("Error: the arguments of postMessage are not valid JSON")
    assert [e["content"].get("toolCall") for e in log[3:]] == ["postMessage", "finishRequest"]
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == ["Fixed"]


def test_arguments_that_do_not_fit_the_schema(app, slack, model):
    model.script(
        replies.tool_calls(("getThreadHistory", {"ascending": "yes", "limit": 5000})),
        ANSWER,
    )
    log = answered(app, slack, "hello")
    error = log[2]["content"]
    assert error.startswith("Error: the arguments of getThreadHistory do not fit its schema")
    assert "ascending" in error and "limit" in error
    assert [e["content"]["toolCall"] for e in log[3:]] == ["postMessage", "finishRequest"]


def test_an_unknown_tool(app, slack, model):
    model.script(
        replies.tool_calls(("searchWeb", {"query": "lunch"})),
        ANSWER,
    )
    log = answered(app, slack, "hello")
    assert log[2]["content"] == (
        "Error: unknown tool 'searchWeb'; the tools are postMessage, getThreadHistory, "
        "expandEntry, finishRequest, rememberForChannel, forgetForChannel, scheduleRoutine"
    )
    assert [e["content"]["toolCall"] for e in log[3:]] == ["postMessage", "finishRequest"]
    still_answers(app, slack, model)


def test_plain_text_is_posted_and_finishes(app, slack, model):
    model.script(replies.text("Try the **risotto**."))
    log = answered(app, slack, "lunch?")
    assert [(e["role"], e["turn"]) for e in log[2:]] == [
        ("system", 0),
        ("assistant", 1),
        ("assistant", 1),
    ]
    assert "plain text" in log[2]["content"]
    assert log[3]["content"] == {"toolCall": "postMessage", "text": "Try the **risotto**."}
    assert log[4]["content"] == {"toolCall": "finishRequest"}
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == [
        "Try the **risotto**."
    ]
    assert len(model.requests) == 1


@pytest.mark.parametrize("stream", ["off", "auto"])
def test_a_model_server_that_cannot_be_reached_is_named_on_stderr(make_app, slack, caplog, stream):
    """Not only the trace's Error entry: one warning (stderr) names the server, by scheme, host
    and port only, and what the connection said."""
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    caplog.set_level(logging.WARNING)
    app = make_app(openai_base_url=f"http://127.0.0.1:{port}/model-key/v1", assistant_stream=stream)
    event = say(slack, "hello")
    log = answered(app, slack, event=event)
    assert system_texts(log) == [
        "Error: the model call failed: the model service could not be reached. "
        f'The user was told: "{SORRY_MODEL.english()}"'
    ]
    lines = [r.getMessage() for r in caplog.records if r.name == "assistant.run.loop.step_loop"]
    assert lines == [
        f"the model server at http://127.0.0.1:{port} failed a run in {thread_of(event)}: "
        "the model service could not be reached (Connection refused)"
    ]
    assert "model-key" not in caplog.text
