"""How Slack delivers events, and what of it gets recorded and answered
(docs/log-format.md#what-is-recorded)."""

from __future__ import annotations

import time

import pytest

from assistant.fakes import ids
from assistant.fakes.events import builders as events
from assistant.fakes.openai import responses as replies
from assistant.fakes.requests import event_callback
from tests.harness import mention as say
from tests.harness import seed, thread_of

# How requests are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners


def answer(model, text: str = "Sure.") -> None:
    """Script one run: the model posts `text`, then finishes."""
    model.script(
        replies.tool_calls(("postMessage", {"text": text, "reasoning": "answer"})),
        replies.finish_request(),
    )


def answered(app, slack, model, text: str = "Hi!") -> dict:
    """A mention, answered; returns its event."""
    answer(model, text)
    event = say(slack, "hello")
    app.send_event(event)
    slack.wait_for_call("reactions.remove")
    app.wait_handled()
    return event


def roles(log: list[dict]) -> list[tuple[str, int]]:
    return [(e["role"], e["turn"]) for e in log]


ANSWERED = [("system", 0), ("user", 0), ("assistant", 1), ("assistant", 1)]


def test_a_retried_delivery_is_recorded_and_answered_once(app, slack, model):
    answer(model)
    mention = say(slack, "one answer please")
    payload = event_callback(mention)
    assert app.send_event(mention, payload=payload).status == 200
    assert app.send_event(mention, payload=payload, retry_num=1).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_handled()

    log = app.log(thread_of(mention))
    assert roles(log) == ANSWERED
    assert len(slack.calls_to("chat.postMessage")) == 1
    assert len(model.requests) == 2


@pytest.mark.parametrize("app_mention_first", [True, False])
def test_a_channel_mention_sent_as_two_events_is_recorded_and_answered_once(
    app, slack, model, app_mention_first
):
    answer(model)
    mention = say(slack, "just once")
    as_message = events.message(mention["text"], ts=mention["ts"])
    for event in (mention, as_message) if app_mention_first else (as_message, mention):
        assert app.send_event(event).status == 200
        app.wait_listeners()  # one after the other: the second finds the first's thread
    slack.wait_for_call("reactions.remove")
    app.wait_handled()

    log = app.log(thread_of(mention))
    assert roles(log) == ANSWERED
    assert log[1]["content"]["text"] == "just once"
    assert len(slack.calls_to("chat.postMessage")) == 1


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param({"signing_secret": "not-the-secret"}, id="bad-signature"),
        pytest.param({"timestamp": int(time.time()) - 6 * 60}, id="stale-timestamp"),
    ],
)
def test_an_unverified_request_is_refused_and_not_recorded(app, slack, model, tamper):
    mention = say(slack, "let me in")
    assert app.send_event(mention, **tamper).status == 401
    app.wait_handled()

    assert not app.assistant.store.has_thread(thread_of(mention))
    assert model.requests == []
    assert slack.calls_to("reactions.add") == []


def test_the_bots_own_message_coming_back_is_not_recorded(app, slack, model):
    mention = answered(app, slack, model)
    post = slack.calls_to("chat.postMessage")[0].response["message"]
    echo = events.bot_message(post["text"], ts=post["ts"], thread_ts=mention["ts"])
    assert app.send_event(echo).status == 200
    app.wait_handled()

    assert roles(app.log(thread_of(mention))) == ANSWERED
    assert len(model.requests) == 2


@pytest.mark.parametrize("legacy", [False, True], ids=["app-bot", "legacy-bot-message"])
def test_another_bots_message_in_the_thread_is_not_recorded(app, slack, model, legacy):
    mention = answered(app, slack, model)
    other = events.bot_message(
        "I am another bot",
        bot_id="B0OTHERBOT",
        user="U0OTHERBOT",
        app_id="A0OTHERAPP",
        thread_ts=mention["ts"],
        legacy=legacy,
    )
    assert app.send_event(other).status == 200
    app.wait_handled()

    assert roles(app.log(thread_of(mention))) == ANSWERED
    assert len(model.requests) == 2


def test_an_edit_of_a_recorded_message_becomes_a_system_entry(app, slack, model):
    mention = answered(app, slack, model)
    edited_text = f"<@{ids.BOT_USER_ID}> hello, and goodbye"
    edit = events.message_changed(ts=mention["ts"], text=edited_text, previous_text=mention["text"])
    assert app.send_event(edit).status == 200
    app.wait_handled()

    log = app.log(thread_of(mention))
    assert roles(log) == [*ANSWERED, ("system", 1)]
    assert log[1]["content"]["text"] == "hello"  # append-only: the original stays
    assert log[-1]["content"] == (
        f"<@{ids.USER_ID}> edited their message from {log[1]['timestamp']}. "
        "New text:\nhello, and goodbye"
    )
    assert len(model.requests) == 2  # an edit is not a new request


def test_a_deletion_of_a_recorded_message_becomes_a_system_entry(app, slack, model):
    mention = answered(app, slack, model)
    deletion = events.message_deleted(deleted_ts=mention["ts"], previous_text=mention["text"])
    assert app.send_event(deletion).status == 200
    app.wait_handled()

    log = app.log(thread_of(mention))
    assert roles(log) == [*ANSWERED, ("system", 1)]
    assert log[-1]["content"] == (
        f"<@{ids.USER_ID}> deleted their message from {log[1]['timestamp']}."
    )


def test_a_follow_up_without_a_mention_is_recorded_and_answered(app, slack, model):
    mention = answered(app, slack, model, "Risotto!")
    answer(model, "Tiramisu.")
    follow_up = seed(slack, events.message("and for dessert?", thread_ts=mention["ts"]))
    assert app.send_event(follow_up).status == 200
    slack.wait_for_call("reactions.remove", count=2)
    app.wait_handled()

    log = app.log(thread_of(mention))
    assert roles(log) == [*ANSWERED, ("user", 2), ("assistant", 3), ("assistant", 3)]
    assert log[4]["content"] == {"userid": f"<@{ids.USER_ID}>", "text": "and for dessert?"}
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == [
        "Risotto!",
        "Tiramisu.",
    ]
    assert slack.calls_to("reactions.add")[1].params["timestamp"] == follow_up["ts"]


def test_a_message_in_a_thread_the_bot_was_never_in_is_not_recorded(app, slack, model):
    parent = seed(slack, events.message("team lunch?"))
    reply = seed(slack, events.message("sure", thread_ts=parent["ts"]))
    for event in (parent, reply):
        assert app.send_event(event).status == 200
    app.wait_handled()

    assert not app.assistant.store.has_thread(thread_of(parent))
    assert model.requests == []
    assert [c.method for c in slack.calls if c.method != "auth.test"] == []


def test_a_direct_message_is_answered_in_its_dm_thread(app, slack, model):
    answer(model, "Hello there!")
    dm = seed(slack, events.dm("hi Aya"))
    assert app.send_event(dm).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_handled()

    key = thread_of(dm)
    assert key.channel == ids.DM_CHANNEL_ID
    log = app.log(key)
    assert roles(log) == ANSWERED
    assert log[1]["content"]["text"] == "hi Aya"
    [post] = slack.calls_to("chat.postMessage")
    assert (post.params["channel"], post.params["thread_ts"]) == (ids.DM_CHANNEL_ID, dm["ts"])
    assert post.params["text"] == "Hello there!"


def test_a_direct_message_that_mentions_the_bot_is_answered(app, slack, model):
    """Slack sends no app_mention in a DM: the message event must not wait for one."""
    answer(model, "Hello there!")
    dm = seed(slack, events.dm(f"<@{ids.BOT_USER_ID}> hi"))
    assert app.send_event(dm).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_handled()

    log = app.log(thread_of(dm))
    assert roles(log) == ANSWERED
    assert log[1]["content"]["text"] == "hi"


def test_the_same_channel_and_ts_in_two_workspaces_are_two_threads(app, slack, model):
    answer(model, "For the first workspace.")
    mention = say(slack, "hello")
    assert app.send_event(mention).status == 200
    app.wait_handled()
    other = event_callback(mention, team_id="T0OTHERTEAM")
    assert app.send_event(mention, payload=other).status == 200
    app.wait_handled()

    ours, theirs = thread_of(mention), thread_of(mention, team="T0OTHERTEAM")
    assert {t.key for t in app.assistant.store.threads()} == {ours, theirs}
    log = app.log(ours)
    assert [e["role"] for e in log[:2]] == ["system", "user"]
    assert [e["index"] for e in log] == list(range(len(log)))
    calls = [e["content"] for e in log if e["role"] == "assistant"]
    assert [c["text"] for c in calls if c["toolCall"] == "postMessage"] == [
        "For the first workspace."
    ]
    # One bot token is its own workspace's: the other's thread is recorded, and left owed to
    # a process with that workspace's token (issue 32).
    assert [e["role"] for e in app.log(theirs)] == ["system", "user"]
    assert len(app.assistant.store.pending(theirs)) == 1
