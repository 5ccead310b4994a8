"""The assistant panel over Socket Mode: `assistant run` as a real process, the panel's events
in `events_api` envelopes and the feedback click in an `interactive` one."""

from __future__ import annotations

import signal

from assistant.fakes import ids
from assistant.fakes.events import builders as events
from assistant.fakes.events.panel import context_changed, feedback_click, open_panel
from assistant.fakes.openai import responses as replies
from context.storage import ThreadKey, Vote, open_store
from tests.harness import seed
from tests.process import TIMEOUT, AssistantProcess
from tests.processes.test_socket_mode import socket_env

OPENER = f"<@{ids.USER_ID}>"


def test_the_panel_over_socket_mode(slack, model, tmp_path):
    model.script(
        replies.tool_calls(("postMessage", {"text": "Risotto!", "reasoning": "answer"})),
        replies.finish_request(),
    )
    with AssistantProcess("run", env=socket_env(slack, model, tmp_path), cwd=tmp_path) as app:
        slack.wait_connected(timeout=TIMEOUT)

        started = open_panel(slack)
        slack.wait_for_ack(slack.send_event(started), timeout=TIMEOUT)
        thread = started["assistant_thread"]
        key = ThreadKey(ids.TEAM_ID, thread["channel_id"], thread["thread_ts"])
        assert slack.calls_to("chat.postMessage")[0].params["thread_ts"] == key.thread_ts
        assert slack.assistant_threads.prompts(key.channel, key.thread_ts) is not None

        moved = context_changed(thread_ts=key.thread_ts, viewing="C0ELSEWHR1")
        slack.wait_for_ack(slack.send_event(moved), timeout=TIMEOUT)

        question = seed(slack, events.dm("Lunch ideas?", thread_ts=key.thread_ts))
        slack.wait_for_ack(slack.send_event(question), timeout=TIMEOUT)
        statuses = slack.wait_for_call("assistant.threads.setStatus", count=2, timeout=TIMEOUT)
        assert [c.params["status"] for c in statuses] == ["is thinking…", ""]
        assert slack.assistant_threads.title(key.channel, key.thread_ts) == "Lunch ideas?"

        answer = slack.calls_to("chat.postMessage")[-1]
        message = slack.store.get(key.channel, answer.response["ts"])
        click = feedback_click(message, positive=True, channel=key.channel)
        for _ in range(2):  # delivered twice: recorded once
            slack.wait_for_ack(slack.send_envelope(click, type="interactive"), timeout=TIMEOUT)

        code = app.stop(signal.SIGTERM)

    assert code == 0, app.stderr.text
    assert "Traceback" not in app.stderr.text
    store = open_store(f"sqlite:///{tmp_path / 'app.db'}")
    try:
        entries = store.entries(key)
        votes = store.votes(key)
        panel = store.panel(key)
    finally:
        store.close()
    texts = [e.content if e.role == "system" else e.content.model_dump() for e in entries]
    assert texts[1] == f"{OPENER} opened the assistant panel from <#{ids.CHANNEL_ID}>."
    assert texts[2].startswith(f"The app greeted {OPENER}")
    assert texts[3] == f"{OPENER} is now viewing <#C0ELSEWHR1>."
    assert texts[4] == {"userid": OPENER, "text": "Lunch ideas?"}
    assert 'The conversation was titled "Lunch ideas?".' in texts
    answered = next(e.index for e in entries if e.role == "assistant")
    rated = f"{OPENER} rated the answer of entry {answered}: good."
    assert texts.count(rated) == 1 and texts[-1] == rated
    assert votes == [Vote(answered, OPENER, "good")]
    assert panel.context["channel_id"] == "C0ELSEWHR1" and panel.title == "Lunch ideas?"
    assert not slack.calls_to("reactions.add")
