"""A model call has a deadline whatever the server sends (issue 21, point 1): `OPENAI_TIMEOUT`
bounds each attempt from the request to the answer's last byte, streamed or not, though every
read gets data in time (SSE keep-alive comments, trickled tokens, a trickled body); each retry
gets a deadline of its own, and the attempts together are bounded. Past it: the model error
path (the half-streamed message deleted, one apology, an `Error:` entry).

Each server here would hold the run far longer than the tests wait (or for ever): the run
ending while the tests wait is the deadline at work."""

from __future__ import annotations

import pytest

from assistant.fakes._server import Hold
from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.stream import Streamed, StreamStyle, Trickled
from assistant.model.attempts import timed_out_note
from assistant.run.loop.apologies import SORRY_MODEL
from tests.app.test_streaming import ANSWER, FINISH, bot_messages, post
from tests.harness import RunningApp, thread_of
from tests.harness import mention as say

TIMED_OUT = (
    "Error: the model call failed: the model did not answer in time. "
    f'The user was told: "{SORRY_MODEL.english()}"'
)

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners
# Far longer than a test waits: 8 bytes every half second is a minute for a short answer.
SLOW_BODY = {"piece": 8, "every": 0.5}
WAIT = 30.0  # a generous bound for a run that, without the deadline, would take minutes


def ended(app: RunningApp, slack, event: dict) -> list[dict]:
    """Wait for the run to end (its :eyes: taken back); the thread's log."""
    slack.wait_for_call("reactions.remove", timeout=WAIT)
    app.wait_idle()
    return app.log(thread_of(event))


def assert_model_error_path(app: RunningApp, slack, event: dict, log: list[dict]) -> None:
    """One apology, the reason in the log, nothing of the answer left in the thread."""
    assert [m["text"] for m in bot_messages(slack, event)] == [SORRY_MODEL.english()]
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == [SORRY_MODEL.english()]
    assert log[-1]["content"] == TIMED_OUT
    assert not any(e["role"] == "assistant" for e in log)  # nothing of the answer recorded
    key = thread_of(event)
    assert app.assistant.store.open_streams(key) == []
    assert app.assistant.store.pending(key) == []


def test_a_stream_kept_alive_without_an_answer_ends_at_the_deadline(make_app, slack, model):
    app = make_app(assistant_stream="auto", openai_timeout=3)
    stalled = Hold()  # never opened while the run goes: the stream never finishes
    style = StreamStyle(pauses=((20, stalled),), keep_alive=0.2)
    model.script(Streamed(replies.tool_calls(post(ANSWER), FINISH), style))
    event = say(slack, "where do we eat?")
    try:
        assert app.send_event(event).status == 200
        (start,) = slack.wait_for_call("chat.startStream")  # part of the answer was shown
        log = ended(app, slack, event)
    finally:
        stalled.release()
    assert_model_error_path(app, slack, event, log)
    assert [c.params["ts"] for c in slack.calls_to("chat.delete") if c.ok] == [start.response["ts"]]


def test_tokens_trickled_into_a_stream_end_at_the_deadline(make_app, slack, model):
    app = make_app(assistant_stream="auto", openai_timeout=3)
    # About 100 tokens at 4 a second: half a minute for the whole answer.
    style = StreamStyle(tokens_per_second=4)
    model.script(Streamed(replies.tool_calls(post(ANSWER), FINISH), style))
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    (start,) = slack.wait_for_call("chat.startStream")
    log = ended(app, slack, event)
    assert_model_error_path(app, slack, event, log)
    assert [c.params["ts"] for c in slack.calls_to("chat.delete") if c.ok] == [start.response["ts"]]


def test_a_whole_answer_trickled_ends_at_the_deadline(make_app, slack, model):
    app = make_app(openai_timeout=3)  # answers asked for whole (the harness's default)
    model.script(Trickled(replies.tool_calls(post(ANSWER), FINISH), **SLOW_BODY))
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    log = ended(app, slack, event)
    assert_model_error_path(app, slack, event, log)
    assert model.requests[0].get("stream") is None


@pytest.mark.parametrize("stream", ["off", "auto"])
def test_each_retry_gets_a_deadline_of_its_own_and_the_log_says_so(make_app, slack, model, stream):
    """The first attempt uses up its whole deadline; the retry still gets a full one. The log
    says the answer was cut and asked again (issue 49: a CPU model writing past its cap)."""
    app = make_app(openai_timeout=2, openai_max_retries=1, assistant_stream=stream)
    slow = (
        Trickled(replies.tool_calls(post(ANSWER), FINISH), **SLOW_BODY)
        if stream == "off"
        else replies.hold(replies.tool_calls(post(ANSWER), FINISH))  # nothing of it comes
    )
    model.script(slow, replies.tool_calls(post("The noodle bar."), FINISH))
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    log = ended(app, slack, event)
    assert [m["text"] for m in bot_messages(slack, event)] == ["The noodle bar."]
    assert log[2] == {**log[2], "role": "system", "content": timed_out_note(1, 2)}
    assert log[2]["content"] == (
        "The model's answer did not come within OPENAI_TIMEOUT (2 s) and was asked for again "
        "(1 attempt cut off): a slow model server needs a smaller ASSISTANT_ANSWER_TOKENS or a "
        "longer OPENAI_TIMEOUT."
    )
    assert [e["content"].get("toolCall") for e in log[3:]] == ["postMessage", "finishRequest"]
    assert len(model.requests) == 2


def test_the_attempts_together_are_bounded(make_app, slack, model):
    app = make_app(openai_timeout=1.5, openai_max_retries=2)
    model.script(*[Trickled(replies.tool_calls(post(ANSWER), FINISH), **SLOW_BODY)] * 3)
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    log = ended(app, slack, event)
    assert_model_error_path(app, slack, event, log)
    assert len(model.requests) == 3
