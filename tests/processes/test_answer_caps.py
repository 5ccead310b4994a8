"""The caps bound an answer, not a process (issue 21, points 5 and 6): real `assistant serve`
processes killed with SIGKILL (the caps in process: tests/app/test_answer_caps.py)."""

from __future__ import annotations

from assistant.fakes.openai import responses as replies
from assistant.fakes.requests import event_callback, signed_event_request
from bench.server import AppServer
from context.storage import open_store
from tests.app.test_answer_caps import FINISH, post, refused
from tests.app.test_durable_runs import bot_texts
from tests.app.test_streaming import deliver
from tests.harness import mention as say
from tests.harness import thread_of


def test_caps_hold_across_sigkilled_runs_and_a_new_request_gets_fresh_ones(slack, model, tmp_path):
    """A model that posts 3 times a reply and never finishes, its `serve` killed twice: the
    answer posts 4 messages (ASSISTANT_MAX_MESSAGES_PER_RUN) in all, not 4 a process."""
    settings = {
        "ASSISTANT_MAX_MESSAGES_PER_RUN": "4",
        "ASSISTANT_MAX_STEPS": "3",
        "ASSISTANT_RUN_LEASE_SECONDS": "1",
    }
    event = say(slack, "tell me everything, again and again")
    key = thread_of(event)
    holds = [replies.hold(), replies.hold()]
    try:
        for run, hold in zip("ab", holds, strict=True):
            model.script(replies.tool_calls(*[post(f"{run}{n}") for n in range(3)]), hold)
            with AppServer(slack, model, tmp_path, **settings) as app:
                if run == "a":
                    body, headers = signed_event_request(event_callback(event))
                    assert deliver(app.url, body, headers) == 200
                hold.wait_reached()  # the reply was carried out; the next call hangs
                app.kill()
        model.script(replies.tool_calls(*[post(f"c{n}") for n in range(3)], FINISH))
        with AppServer(slack, model, tmp_path, **settings) as app:
            slack.wait_for_call("reactions.remove")
            assert bot_texts(slack, key) == ["a0", "a1", "a2", "b0"]

            # A new request in the thread: its answer has caps of its own.
            model.script(replies.tool_calls(*[post(f"d{n}") for n in range(3)], FINISH))
            follow_up = say(slack, "and now?", thread_ts=event["ts"])
            body, headers = signed_event_request(event_callback(follow_up))
            assert deliver(app.url, body, headers) == 200
            slack.wait_for_call("reactions.remove", count=2)
            app.stop()
    finally:
        for hold in holds:
            hold.release()

    assert bot_texts(slack, key) == ["a0", "a1", "a2", "b0", "d0", "d1", "d2"]
    store = open_store(app.database_url)
    try:
        log = [entry.as_dict() for entry in store.entries(key)]
        assert store.pending(key) == []
    finally:
        store.close()
    posts = {
        e["content"]["text"]: e["index"]
        for e in log
        if e["role"] == "assistant" and "text" in e["content"]
    }
    why = (
        "it would take 1 Slack message and this answer has 0 left of its 4 "
        "(ASSISTANT_MAX_MESSAGES_PER_RUN)"
    )
    assert refused(log) == {posts[text]: why for text in ("b1", "b2", "c0", "c1", "c2")}
