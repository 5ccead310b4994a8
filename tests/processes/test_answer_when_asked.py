"""The "Ask Aya about this" shortcut over Socket Mode: a real `assistant run` against the fake
Slack's Socket Mode (the rest of issue 37: tests/app/test_answer_when_asked.py)."""

from __future__ import annotations

import signal

from assistant.fakes import ids
from assistant.fakes.events.shortcuts import message_action
from assistant.listeners.shortcuts.ask_about_this import CALLBACK_ID
from context.storage import ThreadKey, open_store
from tests.app.test_answer_when_asked import BOB
from tests.harness import script_answers
from tests.process import TIMEOUT, AssistantProcess
from tests.processes.test_socket_mode import socket_env


def test_the_shortcut_over_socket_mode(slack, model, tmp_path):
    """The same `message_action` in an `interactive` envelope, to `assistant run`."""
    script_answers(model)
    said = slack.add_message(ids.CHANNEL_ID, user=BOB, text="Is the VPN down?")
    payload = message_action(
        {"ts": said["ts"], "text": said["text"], "user": BOB}, callback_id=CALLBACK_ID
    )
    with AssistantProcess("run", env=socket_env(slack, model, tmp_path), cwd=tmp_path) as app:
        slack.wait_connected(timeout=TIMEOUT)
        slack.wait_for_ack(slack.send_envelope(payload, type="interactive"), timeout=TIMEOUT)
        slack.wait_for_call("reactions.remove", timeout=TIMEOUT)
        code = app.stop(signal.SIGTERM)
    assert code == 0, app.stderr.text
    store = open_store(f"sqlite:///{tmp_path / 'app.db'}")
    try:
        entries = store.entries(ThreadKey(ids.TEAM_ID, ids.CHANNEL_ID, said["ts"]))
    finally:
        store.close()
    asked = [e.content.model_dump() for e in entries if e.role == "user"]
    assert asked == [{"userid": f"<@{ids.USER_ID}>", "text": "Is the VPN down?"}]
    assert slack.calls_to("chat.postMessage")[-1].params["thread_ts"] == said["ts"]
