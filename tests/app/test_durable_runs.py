"""Durable runs (issue: reliability): what a crash leaves in the store is finished by the next
process, once; a thread another process holds is left to it; an event is acknowledged only
once it is recorded.

A crash is reproduced by its traces: the store and the fake Slack are put in the state a
process killed at that moment leaves, then the app starts on them. (The chaos script,
`python -m bench chaos`, kills real processes at random moments.)"""

from __future__ import annotations

import pytest

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from assistant.run.tools.post_message import post_metadata
from assistant.slack.history import slack_time
from context.entry import UserContent
from context.storage import EntryMeta, ThreadKey, open_store
from context.toolcalls import PostMessage
from tests.harness import mention as say
from tests.harness import thread_of

# How events are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

PERSONA = "You're Aya."


def crashed_after(url: str, slack, *contents, posted: bool | None = None) -> ThreadKey:
    """The store at `url` (make_app's first, `app_stores[0]`) as a process killed after
    recording a mention and then `contents` leaves it; the mention is also in Slack."""
    event = say(slack, "where do we eat?")
    key = thread_of(event)
    store = open_store(url)
    try:
        store.append(key, PERSONA, slack_time(event["ts"]))
        meta = EntryMeta(slack_ts=event["ts"], wants_answer=True)
        user = UserContent(userid=f"<@{ids.USER_ID}>", text="where do we eat?")
        store.append(key, user, slack_time(event["ts"]), meta)
        for content in contents:
            entry = store.append(key, content, slack_time(event["ts"]))
            if posted and isinstance(content, PostMessage):
                slack.add_message(
                    key.channel,
                    user=ids.BOT_USER_ID,
                    bot_id=ids.BOT_ID,
                    text=content.text,
                    thread_ts=key.thread_ts,
                    metadata=post_metadata(entry.index, 0),
                )
    finally:
        store.close()
    return key


def bot_texts(slack, key: ThreadKey) -> list[str]:
    return [m["text"] for m in slack.thread(key.channel, key.thread_ts) if m.get("bot_id")]


def test_a_mention_recorded_before_a_crash_is_answered_when_the_app_starts(
    make_app, slack, model, app_stores
):
    key = crashed_after(app_stores[0], slack)
    model.script(
        replies.tool_calls(
            ("postMessage", {"text": "The café downstairs.", "reasoning": "answer"}),
            ("finishRequest", {"reasoning": "done"}),
        )
    )
    app = make_app()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    assert bot_texts(slack, key) == ["The café downstairs."]
    log = app.log(key)
    assert [e["content"].get("toolCall") for e in log[2:]] == ["postMessage", "finishRequest"]
    assert app.assistant.store.pending(key) == []
    # The resumed run learned who it is from Slack: its post is remembered as the bot's.
    copies, _ = app.assistant.store.thread_messages(key)
    assert (f"<@{ids.BOT_USER_ID}>", "The café downstairs.") in [(m.user, m.text) for m in copies]


def test_a_post_that_reached_slack_before_the_crash_is_not_posted_again(
    make_app, slack, model, app_stores
):
    key = crashed_after(app_stores[0], slack, PostMessage(text="The café downstairs."), posted=True)
    model.script(replies.tool_calls(("finishRequest", {"reasoning": "already answered"})))
    app = make_app()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    assert bot_texts(slack, key) == ["The café downstairs."]
    assert slack.calls_to("chat.postMessage") == []
    log = app.log(key)
    assert log[3]["content"] == (
        "The process restarted during this run; the message of entry 2 had reached Slack."
    )
    assert log[4]["content"]["toolCall"] == "finishRequest"
    # The model saw the post and the note before deciding to finish.
    assert "had reached Slack" in model.requests[0]["messages"][1]["content"]
    assert app.assistant.store.metadata(key)[2].slack_ts is not None


def test_a_post_cut_short_before_slack_got_it_is_posted_once(make_app, slack, model, app_stores):
    key = crashed_after(
        app_stores[0], slack, PostMessage(text="The café downstairs."), posted=False
    )
    model.script(replies.tool_calls(("finishRequest", {"reasoning": "answered"})))
    app = make_app()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    assert bot_texts(slack, key) == ["The café downstairs."]
    (post,) = slack.calls_to("chat.postMessage")
    assert post.params["metadata"] == post_metadata(2, 0)
    assert app.log(key)[3]["content"].endswith("the message of entry 2 was posted now.")


def test_a_thread_another_process_runs_is_left_to_it_until_its_lease_expires(
    make_app, slack, model
):
    app = make_app(assistant_run_lease_seconds=1)
    event = say(slack, "hello")
    key = thread_of(event)
    store = app.assistant.store
    store.append(key, PERSONA, "2025-04-04T12:33:00Z")
    assert store.claim(key, "another-process", 3600)
    app.send_event(event)
    app.wait_handled()
    assert model.requests == []  # recorded, owed, and left to the holder
    assert [p.index for p in store.pending(key)] == [1]

    # The holder dies: its lease runs out, and this process takes the thread over.
    model.script(
        replies.tool_calls(
            ("postMessage", {"text": "Hi!", "reasoning": "greet"}),
            ("finishRequest", {"reasoning": "done"}),
        )
    )
    assert store.claim(key, "another-process", -1)  # as if its last renewal were long ago
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    assert bot_texts(slack, key) == ["Hi!"]
    assert store.pending(key) == []


def test_an_event_is_acknowledged_only_once_it_is_recorded(app, slack, model):
    model.default = replies.tool_calls(("finishRequest", {"reasoning": "done"}))
    event = say(slack, "hello")
    assert app.send_event(event).status == 200
    # No waiting: the 200 came after the write.
    log = app.log(thread_of(event))
    assert log[1]["content"]["text"] == "hello"
    assert app.assistant.store.metadata(thread_of(event))[1].wants_answer
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
