"""A real `assistant serve` killed while it streams an answer: the next one resumes it with one
whole answer (streaming in process: tests/app/test_streaming.py)."""

from __future__ import annotations

from assistant.fakes.openai import responses as replies
from assistant.fakes.requests import event_callback, signed_event_request
from bench.server import AppServer
from context.storage import open_store
from tests.app.test_streaming import ANSWER, FINISH, deliver, held_after, post, thread_bot_texts
from tests.harness import mention as say
from tests.harness import thread_of


def test_a_run_killed_mid_stream_is_resumed_with_one_whole_answer(slack, model, tmp_path):
    """A real process killed (SIGKILL) while the model writes and its text streams: the next
    process deletes the half message, says so in the log, and answers again, once."""
    first_try = "I am thinking about it. " * 20
    gate, reply = held_after(60, replies.tool_calls(post(first_try), FINISH), tokens_per_second=100)
    model.script(reply)
    event = say(slack, "where do we eat?")
    key = thread_of(event)
    settings = {"ASSISTANT_STREAM": "auto", "ASSISTANT_RUN_LEASE_SECONDS": "1"}
    try:
        with AppServer(slack, model, tmp_path, **settings) as app:
            body, headers = signed_event_request(event_callback(event))
            assert deliver(app.url, body, headers) == 200
            # Streaming, and its ts recorded (before the first append is sent).
            (start,) = slack.wait_for_call("chat.startStream")
            slack.wait_for_call("chat.appendStream")
            app.kill()
        model.script(replies.tool_calls(post(ANSWER), FINISH))
        with AppServer(slack, model, tmp_path, **settings) as app:
            slack.wait_for_call("chat.stopStream", where=lambda c: c.ok)
            slack.wait_for_call("reactions.remove")
            app.stop()  # graceful: the resumed run has ended
    finally:
        gate.release()

    assert thread_bot_texts(slack, key) == [ANSWER]
    assert start.response["ts"] in [c.params["ts"] for c in slack.calls_to("chat.delete")]
    store = open_store(app.database_url)
    try:
        log = [entry.as_dict() for entry in store.entries(key)]
        assert store.pending(key) == []
        assert store.open_streams(key) == []
    finally:
        store.close()
    kinds = [e["content"] if e["role"] == "system" else e["content"]["toolCall"] for e in log[2:]]
    assert kinds == [
        "The process restarted during this run; the unfinished message it was streaming was "
        "deleted.",
        "postMessage",
        "finishRequest",
    ]
    assert log[3]["content"]["text"] == ANSWER
