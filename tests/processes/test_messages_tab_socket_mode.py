"""The agent's Messages tab over Socket Mode: `assistant run` as a real process, with
`app_home_opened` and `app_context_changed` in `events_api` envelopes."""

from __future__ import annotations

import signal

from assistant.fakes import ids
from assistant.fakes.events import builders as events
from assistant.fakes.events.panel import app_context_changed, channel_entity, open_messages_tab
from assistant.fakes.openai import responses as replies
from context.storage import ThreadKey, open_store
from tests.harness import seed
from tests.process import TIMEOUT, AssistantProcess
from tests.processes.test_socket_mode import socket_env

ME = f"<@{ids.USER_ID}>"


def answer(text: str) -> replies.Completion:
    return replies.tool_calls(
        ("postMessage", {"text": text, "reasoning": "answer"}),
        ("finishRequest", {"reasoning": "done"}),
    )


def test_the_messages_tab_over_socket_mode(slack, model, tmp_path):
    model.script(answer("Risotto!"), answer("Soup."))
    with AssistantProcess("run", env=socket_env(slack, model, tmp_path), cwd=tmp_path) as app:
        slack.wait_connected(timeout=TIMEOUT)
        for _ in range(2):  # opened twice: the prompts once
            slack.wait_for_ack(slack.send_event(open_messages_tab(slack)), timeout=TIMEOUT)
        viewing = app_context_changed(channel_entity("C0WATCHED1"))
        slack.wait_for_ack(slack.send_event(viewing), timeout=TIMEOUT)

        question = seed(slack, events.dm("Lunch ideas?"))
        slack.wait_for_ack(slack.send_event(question), timeout=TIMEOUT)
        (posted,) = slack.wait_for_call("chat.postMessage", timeout=TIMEOUT)

        # A change while the thread goes on reaches that thread's next prompt.
        viewing = app_context_changed(channel_entity("C0WATCHED2"))
        slack.wait_for_ack(slack.send_event(viewing), timeout=TIMEOUT)
        reply = seed(slack, events.dm("And dinner?", thread_ts=question["ts"]))
        slack.wait_for_ack(slack.send_event(reply), timeout=TIMEOUT)
        slack.wait_for_call("chat.postMessage", count=2, timeout=TIMEOUT)
        code = app.stop(signal.SIGTERM)

    assert code == 0, app.stderr.text
    assert "Traceback" not in app.stderr.text
    (prompts,) = slack.calls_to("assistant.threads.setSuggestedPrompts")
    assert "thread_ts" not in prompts.params
    assert posted.params["thread_ts"] == question["ts"]
    store = open_store(f"sqlite:///{tmp_path / 'app.db'}")
    try:
        entries = store.entries(ThreadKey(ids.TEAM_ID, ids.DM_CHANNEL_ID, question["ts"]))
    finally:
        store.close()
    assert entries[1].content == f"{ME} is now viewing <#C0WATCHED1>."
    assert entries[2].content.text == "Lunch ideas?"
    request = model.requests[0]["messages"][1]["content"]
    assert f"{ME} is now viewing <#C0WATCHED1>." in request
    later = [str(entry.content) for entry in entries[3:]]
    assert later.count(f"{ME} is now viewing <#C0WATCHED2>.") == 1
    assert f"{ME} is now viewing <#C0WATCHED2>." in model.requests[1]["messages"][1]["content"]
