"""Answer only when asked (issue 37), end to end over HTTP: a channel with strict mentions
records a follow-up in the bot's thread but answers it only when it mentions the bot (a
workspace default a channel inherits, the App Home and the CLI set it); the "Ask Aya about
this" message shortcut, a signed `message_action`, opens a thread on any message, recorded
like a mention by the person who used it."""

from __future__ import annotations

import json

import pytest

from assistant.fakes import ids
from assistant.fakes.events import builders as events
from assistant.fakes.events.home import app_home_opened, home_click, view_submission
from assistant.fakes.events.panel import signed_interaction_request
from assistant.fakes.events.shortcuts import message_action
from assistant.fakes.openai import responses as replies
from assistant.listeners.shortcuts.ask_about_this import CALLBACK_ID
from assistant.panel.home_views import EDIT_ACTION
from assistant.run.loop.answer_so_far import NO_ANSWER, NOT_FINISHED
from assistant.run.loop.apologies import SORRY_NO_ANSWER
from context.channels import WORKSPACE_DEFAULT, ChannelConfig
from tests.harness import answered_log, mention, script_answers, seed, thread_of

# How events are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

BOB = "U0BOB00001"
ADMIN = "U0ADMIN001"


def interact(app, payload: dict) -> tuple[int, bytes]:
    body, headers = signed_interaction_request(payload)
    response = app.request("POST", "/slack/events", body, headers)
    return response.status, response.body


def user_entries(log: list[dict]) -> list[dict]:
    return [entry for entry in log if entry["role"] == "user"]


def strict(app, channel: str = ids.CHANNEL_ID, value: bool | None = True) -> None:
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel=channel, strict_mentions=value)
    )


def test_a_follow_up_without_a_mention_is_recorded_not_answered_in_a_strict_channel(
    app, slack, model
):
    strict(app)
    script_answers(model, 2)
    first = mention(slack, "lunch?")
    answered_log(app, slack, first)
    calls = len(model.requests)

    aside = seed(slack, events.message("thanks, noted", thread_ts=first["ts"], user=BOB))
    assert app.send_event(aside).status == 200
    app.wait_handled()
    app.wait_idle()
    log = app.log(thread_of(first))
    assert user_entries(log)[-1]["content"]["text"] == "thanks, noted"  # in the log
    assert len(model.requests) == calls  # not owed: no run

    again = mention(slack, "and tomorrow?", thread_ts=first["ts"], user=BOB)
    log = answered_log(app, slack, again)
    assert len(model.requests) == calls + 1
    # The run answered the mention, which the unowed aside before it does not hold back.
    assert log[-1]["content"]["toolCall"] == "finishRequest"


def test_without_strict_mentions_the_same_follow_up_is_answered(app, slack, model):
    script_answers(model, 2)
    first = mention(slack, "lunch?")
    answered_log(app, slack, first)
    aside = seed(slack, events.message("and tomorrow?", thread_ts=first["ts"], user=BOB))
    answered_log(app, slack, aside)
    assert len(model.requests) == 2


def test_a_channel_inherits_strict_mentions_from_the_workspace_default(app, slack, model):
    strict(app, WORKSPACE_DEFAULT)
    script_answers(model, 2)
    first = mention(slack, "lunch?")
    answered_log(app, slack, first)
    aside = seed(slack, events.message("ok", thread_ts=first["ts"], user=BOB))
    assert app.send_event(aside).status == 200
    app.wait_handled()
    app.wait_idle()
    assert len(model.requests) == 1

    strict(app, ids.CHANNEL_ID, False)  # the channel's own setting wins
    more = seed(slack, events.message("and dessert?", thread_ts=first["ts"], user=BOB))
    answered_log(app, slack, more)
    assert len(model.requests) == 2


def test_an_admin_sets_strict_mentions_in_the_app_home(app, slack):
    slack.add_user(ADMIN, "ada", is_admin=True)
    assert app.send_event(app_home_opened(user=ADMIN)).status == 200
    slack.wait_for_call("views.publish")
    tab = slack.home_tabs[ADMIN]
    status, _ = interact(app, home_click(slack, tab, EDIT_ACTION, "", user=ADMIN))
    assert status == 200
    modal = slack.modals[-1]
    blocks = {block.get("block_id") for block in modal["blocks"]}
    assert "strict_mentions" in blocks
    values = {
        "channel": {"type": "conversations_select", "selected_conversation": ids.CHANNEL_ID},
        "strict_mentions": {
            "type": "static_select",
            "selected_option": {"text": {"type": "plain_text", "text": "x"}, "value": "strict"},
        },
    }
    status, body = interact(app, view_submission(slack, modal, values, user=ADMIN))
    assert status == 200 and json.loads(body or b"{}") == {}
    kept = app.assistant.store.channel_config(ids.TEAM_ID, ids.CHANNEL_ID)
    assert kept.strict_mentions is True
    assert "follow-ups only when mentioned" in json.dumps(slack.home_tabs[ADMIN]["blocks"])


def test_the_shortcut_opens_a_thread_on_any_message_recorded_like_a_mention(app, slack, model):
    """Bob's message never mentioned the bot; Alice uses the shortcut on it: the message's
    text is her question, owed an answer, answered in a thread under Bob's message."""
    script_answers(model)
    said = slack.add_message(ids.CHANNEL_ID, user=BOB, text="The deploy failed with exit 137")
    payload = message_action(
        {"ts": said["ts"], "text": said["text"], "user": BOB}, callback_id=CALLBACK_ID
    )
    status, _ = interact(app, payload)
    assert status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    key = thread_of({"channel": ids.CHANNEL_ID, "ts": said["ts"]})
    log = app.log(key)
    asked = user_entries(log)
    assert [(e["content"]["userid"], e["content"]["text"]) for e in asked] == [
        (f"<@{ids.USER_ID}>", "The deploy failed with exit 137")
    ]
    assert log[-1]["content"]["toolCall"] == "finishRequest"
    post = slack.calls_to("chat.postMessage")[-1].params
    assert post["channel"] == ids.CHANNEL_ID and post["thread_ts"] == said["ts"]


def test_a_forged_or_malformed_shortcut_records_nothing(app, slack, model):
    said = slack.add_message(ids.CHANNEL_ID, user=BOB, text="hello")
    payload = message_action({"ts": said["ts"], "text": "hello"}, callback_id=CALLBACK_ID)
    body, headers = signed_interaction_request(payload, signing_secret="not-the-secret")
    assert app.request("POST", "/slack/events", body, headers).status == 401
    bad = {**payload, "message": {"ts": "yesterday", "text": "hello"}}
    status, _ = interact(app, bad)
    assert status == 200  # acknowledged: Slack's retry could not help
    app.wait_handled()
    assert not app.assistant.store.has_thread(
        thread_of({"channel": ids.CHANNEL_ID, "ts": said["ts"]})
    )
    assert model.requests == []


def test_the_shortcut_on_a_follow_up_strict_mentions_left_unanswered_asks_it(app, slack, model):
    strict(app)
    script_answers(model, 2)
    first = mention(slack, "lunch?")
    answered_log(app, slack, first)
    aside = seed(slack, events.message("is the noodle bar open?", thread_ts=first["ts"], user=BOB))
    assert app.send_event(aside).status == 200
    app.wait_handled()
    app.wait_idle()
    assert len(model.requests) == 1

    message = {"ts": aside["ts"], "thread_ts": first["ts"], "text": aside["text"], "user": BOB}
    before = len(slack.calls_to("chat.postMessage"))
    status, _ = interact(app, message_action(message, callback_id=CALLBACK_ID))
    assert status == 200
    slack.wait_for_call("chat.postMessage", count=before + 1)
    app.wait_idle()
    log = app.log(thread_of(first))
    asked = [(e["content"]["userid"], e["content"]["text"]) for e in user_entries(log)]
    assert asked[-2:] == [
        (f"<@{BOB}>", "is the noodle bar open?"),  # the follow-up, as recorded
        (f"<@{ids.USER_ID}>", "is the noodle bar open?"),  # Alice's ask about it, answered
    ]
    assert len(model.requests) == 2
    assert log[-1]["content"]["toolCall"] == "finishRequest"


def test_the_threads_copy_of_a_shortcut_message_keeps_its_author(app, slack, model):
    script_answers(model)
    said = slack.add_message(ids.CHANNEL_ID, user=BOB, text="Budget is due Friday")
    message = {"ts": said["ts"], "text": said["text"], "user": BOB}
    status, _ = interact(app, message_action(message, callback_id=CALLBACK_ID))
    assert status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    key = thread_of({"channel": ids.CHANNEL_ID, "ts": said["ts"]})
    copies, _ = app.assistant.store.thread_messages(key)
    assert [(c.ts, c.user) for c in copies if c.ts == said["ts"]] == [(said["ts"], f"<@{BOB}>")]


def finish(reasoning: str) -> replies.Completion:
    return replies.tool_calls(("finishRequest", {"reasoning": reasoning}))


def test_a_mention_the_model_will_not_answer_gets_an_apology_a_follow_up_ends_silent(
    app, slack, model
):
    """A model that ends an answer without posting is told once to answer first; if it
    insists, a person who asked the bot itself gets the apology, a follow-up without a
    mention (people talking among themselves) ends silent."""
    model.script(finish("nothing"), finish("still nothing"))
    first = mention(slack, "lunch?")
    log = answered_log(app, slack, first)
    key = thread_of(first)
    assert [e["content"] for e in log[2:3]] == [NOT_FINISHED]
    assert log[-1]["content"] == (
        f'Error: {NO_ANSWER}. The user was told: "{SORRY_NO_ANSWER.english()}"'
    )
    told = [m["text"] for m in slack.thread(key.channel, key.thread_ts)[1:]]
    assert told == [SORRY_NO_ANSWER.english()]

    model.script(finish("people talking"), finish("still nothing to answer"))
    aside = seed(slack, events.message("see you there", thread_ts=first["ts"], user=BOB))
    log = answered_log(app, slack, aside)
    assert log[-2]["content"] == NOT_FINISHED
    assert log[-1]["content"]["toolCall"] == "finishRequest"
    assert [m["text"] for m in slack.thread(key.channel, key.thread_ts)[1:]] == [
        SORRY_NO_ANSWER.english(),
        "see you there",
    ]
    metas = app.assistant.store.metadata(key)
    assert metas[1].addressed and not metas[log[-3]["index"]].addressed
    assert app.assistant.store.pending(key) == []
