"""SIGTERM and SIGINT stop `serve` and `run` within a bound even while a model or Slack call
hangs (issue 21, point 1): the runs under way get a short grace, then are cancelled; what they
answer stays owed (no `Error:` entry, no apology), nothing half-shown is left in Slack, and the
next process answers it once.

Real processes against the fakes. The calls hang for as long as the test lasts: the process
exiting while the test waits (`AssistantProcess.stop`, TIMEOUT) is the bound at work; the
documented one is 10 s (docs/operations.md, "Operations")."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from assistant.fakes._server import Hold
from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.stream import Streamed, StreamStyle
from assistant.fakes.requests import event_callback, signed_event_request
from bench.server import AppServer
from context.storage import ThreadKey, open_store
from tests.app.test_durable_runs import bot_texts
from tests.app.test_streaming import ANSWER, FINISH, deliver, post
from tests.harness import mention as say
from tests.harness import thread_of
from tests.process import TIMEOUT, AssistantProcess
from tests.processes.test_socket_mode import socket_env

FIRST = "The noodle bar on the corner."


def stored(tmp_path: Path, key: ThreadKey) -> tuple[list[dict], list[int], list[str]]:
    """What the stopped process left: the thread's log, its owed entries, its open streams."""
    store = open_store(f"sqlite:///{tmp_path / 'app.db'}")
    try:
        log = [entry.as_dict() for entry in store.entries(key)]
        return log, [p.index for p in store.pending(key)], store.open_streams(key)
    finally:
        store.close()


def assert_stopped_owing(app: AssistantProcess, tmp_path: Path, key: ThreadKey) -> None:
    """The process exited 0 and cleanly; the mention is still owed, and no run ended."""
    code = app.stop(None)
    assert code == 0, app.stderr.text
    assert "Traceback" not in app.stderr.text
    assert "stopping 1 run(s): what they answer stays owed" in app.stderr.text
    log, owed, streams = stored(tmp_path, key)
    assert owed == [1]
    assert not any(e["role"] == "system" and e["content"].startswith("Error") for e in log)
    assert streams == []


def answer_in_serve(slack, model, tmp_path: Path, key: ThreadKey) -> None:
    """A second process takes the owed mention over at once and answers it."""
    model.script(replies.tool_calls(post(FIRST), FINISH))
    removed = len(slack.calls_to("reactions.remove"))
    with AppServer(slack, model, tmp_path) as second:
        slack.wait_for_call("reactions.remove", count=removed + 1, timeout=TIMEOUT)
        assert second.process.stop() == 0


def test_sigterm_stops_serve_while_the_model_call_hangs(slack, model, tmp_path):
    held = replies.hold()
    model.script(held)
    event = say(slack, "where do we eat?")
    key = thread_of(event)
    try:
        with AppServer(slack, model, tmp_path) as app:
            assert deliver(app.url, *signed_event_request(event_callback(event))) == 200
            held.wait_reached(timeout=TIMEOUT)
            app.process.process.send_signal(signal.SIGTERM)
            assert_stopped_owing(app.process, tmp_path, key)
    finally:
        held.release()
    assert slack.calls_to("chat.postMessage") == []  # no apology: the run is not over
    answer_in_serve(slack, model, tmp_path, key)
    assert bot_texts(slack, key) == [FIRST]


def test_sigterm_stops_serve_while_a_slack_post_hangs(slack, model, tmp_path):
    model.script(replies.tool_calls(post(FIRST), FINISH))
    event = say(slack, "where do we eat?")
    key = thread_of(event)
    posting = slack.hold("chat.postMessage")  # Slack never answers while this process lives
    with AppServer(slack, model, tmp_path) as app:
        assert deliver(app.url, *signed_event_request(event_callback(event))) == 200
        posting.wait_reached(timeout=TIMEOUT)
        app.process.process.send_signal(signal.SIGTERM)
        assert_stopped_owing(app.process, tmp_path, key)
    # The post is recorded, not known to be posted: the next process posts it, once.
    model.script(replies.tool_calls(("finishRequest", {"reasoning": "answered"})))
    removed = len(slack.calls_to("reactions.remove"))
    with AppServer(slack, model, tmp_path) as second:
        slack.wait_for_call("reactions.remove", count=removed + 1, timeout=TIMEOUT)
        assert second.process.stop() == 0
    assert bot_texts(slack, key) == [FIRST]
    log, owed, _ = stored(tmp_path, key)
    assert owed == []
    assert "The process restarted during this run; the message of entry 2 was posted now." in [
        e["content"] for e in log
    ]


def test_sigterm_takes_back_what_a_stopped_run_was_streaming(slack, model, tmp_path):
    stalled = Hold()  # the model writes part of its answer, then only keeps the line alive
    style = StreamStyle(pauses=((20, stalled),), keep_alive=0.2)
    model.script(Streamed(replies.tool_calls(post(ANSWER), FINISH), style))
    event = say(slack, "where do we eat?")
    key = thread_of(event)
    try:
        with AppServer(slack, model, tmp_path, ASSISTANT_STREAM="auto") as app:
            assert deliver(app.url, *signed_event_request(event_callback(event))) == 200
            (start,) = slack.wait_for_call("chat.startStream", timeout=TIMEOUT)
            stalled.wait_reached(timeout=TIMEOUT)
            app.process.process.send_signal(signal.SIGTERM)
            assert_stopped_owing(app.process, tmp_path, key)
    finally:
        stalled.release()
    assert start.response["ts"] in [c.params["ts"] for c in slack.calls_to("chat.delete")]
    assert bot_texts(slack, key) == []  # nothing half-shown left
    answer_in_serve(slack, model, tmp_path, key)
    assert bot_texts(slack, key) == [FIRST]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_run_stops_while_the_model_call_hangs(slack, model, tmp_path, sig):
    held = replies.hold()
    model.script(held)
    env = socket_env(slack, model, tmp_path)
    try:
        with AssistantProcess("run", env=env, cwd=tmp_path) as app:
            slack.wait_connected(timeout=TIMEOUT)
            event = say(slack, "where do we eat?")
            key = thread_of(event)
            slack.wait_for_ack(slack.send_event(event), timeout=TIMEOUT)
            held.wait_reached(timeout=TIMEOUT)
            app.process.send_signal(sig)
            assert_stopped_owing(app, tmp_path, key)
    finally:
        held.release()
    assert slack.calls_to("chat.postMessage") == []
    model.script(replies.tool_calls(post(FIRST), FINISH))
    removed = len(slack.calls_to("reactions.remove"))
    with AssistantProcess("run", env=env, cwd=tmp_path) as second:
        slack.wait_for_call("reactions.remove", count=removed + 1, timeout=TIMEOUT)
        assert second.stop(signal.SIGTERM) == 0
    assert bot_texts(slack, key) == [FIRST]
