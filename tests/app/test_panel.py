"""Slack's assistant panel end to end: opening it (greeting, suggested prompts),
questions answered under Slack's status and titled, context changes, feedback clicks
(form-encoded, signed block actions), all of it in the thread's log
(docs/log-format.md#the-assistant-panel)."""

from __future__ import annotations

import json
import logging

import pytest

from assistant.fakes import ids
from assistant.fakes import requests as event_requests
from assistant.fakes.events import builders as events
from assistant.fakes.events.panel import (
    context_changed,
    feedback_click,
    open_messages_tab,
    open_panel,
    signed_interaction_request,
)
from assistant.fakes.openai import responses as replies
from context.storage import ThreadKey, Vote
from tests.harness import mention, prompt_log, seed, thread_of

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

OPENER = f"<@{ids.USER_ID}>"


def panel_key(started: dict) -> ThreadKey:
    thread = started["assistant_thread"]
    return ThreadKey(ids.TEAM_ID, thread["channel_id"], thread["thread_ts"])


def opened(app, slack) -> dict:
    started = open_panel(slack)
    assert app.send_event(started).status == 200
    app.wait_handled()
    return started


def ask(app, slack, model, started: dict, text: str, answer: str = "Risotto!") -> dict:
    """A person writes in the panel thread; the model answers and finishes."""
    model.script(
        replies.tool_calls(("postMessage", {"text": answer, "reasoning": "answer"})),
        replies.finish_request(),
    )
    thread = started["assistant_thread"]
    message = seed(slack, events.dm(text, thread_ts=thread["thread_ts"]))
    assert app.send_event(message).status == 200
    app.wait_handled()
    return message


def contents(app, key: ThreadKey) -> list:
    return [entry["content"] for entry in app.log(key)]


def click(app, payload: dict, **signing):
    body, headers = signed_interaction_request(payload, **signing)
    return app.request("POST", "/slack/events", body, headers)


def test_opening_the_panel_records_it_and_greets_with_suggested_prompts(make_app, slack, model):
    prompts = [{"title": "Lunch", "message": "What should I eat?"}]
    app = make_app(
        assistant_greeting="Olá! Em que posso ajudar?",
        assistant_suggested_prompts=json.dumps(prompts),
    )
    started = open_panel(slack, viewing="C0WATCHED1")
    payload = event_requests.event_callback(started)
    assert app.send_event(started, payload=payload).status == 200
    assert app.send_event(started, payload=payload, retry_num=1).status == 200  # Slack's retry
    app.wait_handled()

    key = panel_key(started)
    log = app.log(key)
    assert [(e["index"], e["role"], e["turn"]) for e in log] == [
        (0, "system", 0),
        (1, "system", 0),
        (2, "system", 0),
    ]
    assert log[0]["content"] == app.settings.persona.instructions()
    assert log[1]["content"] == f"{OPENER} opened the assistant panel from <#C0WATCHED1>."
    assert log[2]["content"] == (
        f'The app greeted {OPENER} (its words, not the model\'s): "Olá! Em que posso ajudar?"\n'
        'Suggested prompts shown: "Lunch" (sends "What should I eat?").'
    )

    greeting = slack.calls_to("chat.postMessage")
    assert [(c.params["channel"], c.params["thread_ts"]) for c in greeting] == [
        (key.channel, key.thread_ts)
    ]
    assert greeting[0].params["text"] == "Olá! Em que posso ajudar?"
    assert slack.assistant_threads.prompts(key.channel, key.thread_ts).prompts == tuple(prompts)
    assert len(slack.calls_to("assistant.threads.setSuggestedPrompts")) == 1
    panel = app.assistant.store.panel(key)
    assert panel.user == ids.USER_ID and panel.context["channel_id"] == "C0WATCHED1"
    assert model.requests == []  # nothing to answer yet


def test_the_default_greeting_and_prompts(app, slack, model):
    started = opened(app, slack)
    key = panel_key(started)
    assert slack.calls_to("chat.postMessage")[0].params["text"] == "Hi, I'm Aya. How can I help?"
    shown = slack.assistant_threads.prompts(key.channel, key.thread_ts).prompts
    assert [prompt["title"] for prompt in shown] == [
        "Explain something",
        "Draft a message",
        "Brainstorm ideas",
    ]


def test_what_slack_refuses_of_the_greeting_and_the_title_is_recorded(app, slack, model):
    slack.fail("chat.postMessage", "not_in_channel")
    started = opened(app, slack)
    key = panel_key(started)
    assert contents(app, key)[2] == (
        "The greeting could not be posted: not_in_channel (from chat.postMessage).\n"
        'Suggested prompts shown: "Explain something" (sends "Explain how DNS works, in a few '
        'short paragraphs."); "Draft a message" (sends "Help me write a short, friendly note '
        'asking my team for feedback on a draft."); "Brainstorm ideas" (sends "Give me five '
        'ideas for a team offsite.").'
    )
    slack.fail("assistant.threads.setTitle", "invalid_thread_ts")
    ask(app, slack, model, started, "lunch?")
    refused = (
        "The conversation's title could not be set: "
        "invalid_thread_ts (from assistant.threads.setTitle)."
    )
    assert refused in contents(app, key)
    assert app.assistant.store.panel(key).title == "lunch?"  # tried once, not on every message


def test_a_panel_opened_while_viewing_no_channel(app, slack):
    started = open_panel(slack, viewing=None)
    app.send_event(started)
    app.wait_handled()
    assert contents(app, panel_key(started))[1] == f"{OPENER} opened the assistant panel."


def test_the_legacy_status_speaks_the_deployment_s_language(make_app, slack, model):
    """Where sessions are refused, the status is set as the run starts, before Slack was asked
    which language the person reads: ASSISTANT_LOCALE's words, the loading messages too."""
    app = make_app(assistant_locale="pt_BR")
    ask(app, slack, model, opened(app, slack), "Onde almoçar?")
    working = slack.calls_to("assistant.threads.setStatus")[0].params
    assert working["status"] == "está pensando…"
    assert working["loading_messages"] == [
        "Lendo a conversa…",
        "Pensando…",
        "Escrevendo uma resposta…",
    ]


def test_a_question_is_answered_under_the_status_and_titles_the_thread(app, slack, model):
    started = opened(app, slack)
    key = panel_key(started)
    text = "  What's a *good* lunch near <#C0FAKECHN1|general>?"
    question = ask(app, slack, model, started, text)

    statuses = slack.calls_to("assistant.threads.setStatus")
    assert [(c.params["channel_id"], c.params["thread_ts"]) for c in statuses] == [
        (key.channel, key.thread_ts)
    ] * 2
    assert statuses[0].params["status"] == "is thinking…"
    assert statuses[0].params["loading_messages"] == list(app.settings.persona.loading_messages)
    assert statuses[1].params["status"] == ""  # cleared when the run ended
    assert slack.assistant_threads.status(key.channel, key.thread_ts).status == ""
    assert not [c for c in slack.calls if c.method.startswith("reactions.")]  # no :eyes:

    title = "What's a *good* lunch near #general?"
    assert [c.params["title"] for c in slack.calls_to("assistant.threads.setTitle")] == [title]
    assert slack.assistant_threads.title(key.channel, key.thread_ts) == title

    log = app.log(key)
    asked = next(e for e in log if e["role"] == "user")
    assert asked["content"]["text"] == question["text"]  # recorded as written
    assert f'The conversation was titled "{title}".' in contents(app, key)
    answer = next(e for e in log if e["role"] == "assistant")
    assert answer["content"]["text"] == "Risotto!"
    post = slack.calls_to("chat.postMessage")[-1]
    assert post.params["thread_ts"] == key.thread_ts
    assert post.params["blocks"][-1]["type"] == "context_actions"  # feedback buttons

    # Later messages do not change the title.
    ask(app, slack, model, started, "And for dinner?", answer="Soup.")
    assert len(slack.calls_to("assistant.threads.setTitle")) == 1
    assert len(slack.calls_to("assistant.threads.setStatus")) == 4


def test_the_status_is_cleared_when_the_run_fails(app, slack, model):
    started = opened(app, slack)
    key = panel_key(started)
    model.script(replies.error(500))
    thread = started["assistant_thread"]
    app.send_event(seed(slack, events.dm("hello?", thread_ts=thread["thread_ts"])))
    app.wait_handled()

    assert [c.params["status"] for c in slack.calls_to("assistant.threads.setStatus")] == [
        "is thinking…",
        "",
    ]
    # The title's entry is the listener's, recorded beside the run: before or after its end.
    last = [c for c in contents(app, key)[-2:] if isinstance(c, str)]
    assert [c for c in last if c.startswith("Error: the model call failed")], last


def test_a_context_change_is_recorded_once_and_seen_by_the_next_prompt(app, slack, model):
    started = opened(app, slack)
    key = panel_key(started)
    moved = context_changed(thread_ts=key.thread_ts, viewing="C0ELSEWHR1")
    payload = event_requests.event_callback(moved)
    assert app.send_event(moved, payload=payload).status == 200
    assert app.send_event(moved, payload=payload, retry_num=1).status == 200
    app.wait_handled()

    viewing = f"{OPENER} is now viewing <#C0ELSEWHR1>."
    assert contents(app, key).count(viewing) == 1
    assert app.assistant.store.panel(key).context["channel_id"] == "C0ELSEWHR1"
    assert model.requests == []  # a context change starts no run

    ask(app, slack, model, started, "what is this channel about?")
    shown = [entry["content"] for entry in prompt_log(model.requests[0])]
    assert viewing in shown
    assert shown.index(viewing) < len(shown) - 1  # before the question

    away = context_changed(thread_ts=key.thread_ts, viewing=None)
    app.send_event(away)
    app.wait_handled()
    assert contents(app, key)[-1] == f"{OPENER} is no longer viewing a channel."


def test_an_edit_in_a_panel_thread_is_still_recorded(app, slack, model):
    started = opened(app, slack)
    key = panel_key(started)
    question = ask(app, slack, model, started, "lunch?")
    edit = events.message_changed(
        ts=question["ts"],
        text="dinner?",
        previous_text="lunch?",
        channel=key.channel,
        channel_type="im",
        thread_ts=key.thread_ts,
    )
    app.send_event(edit)
    app.wait_handled()
    assert contents(app, key)[-1].endswith("New text:\ndinner?")


def answered_mention(app, slack, model) -> tuple[ThreadKey, dict, int]:
    """A channel mention answered; its thread, the answer's Slack message, its entry."""
    model.script(
        replies.tool_calls(("postMessage", {"text": "Pizza.", "reasoning": "answer"})),
        replies.finish_request(),
    )
    event = mention(slack, "lunch?")
    app.send_event(event)
    slack.wait_for_call("reactions.remove")
    app.wait_handled()
    key = thread_of(event)
    post = slack.calls_to("chat.postMessage")[-1]
    answer = next(e["index"] for e in app.log(key) if e["role"] == "assistant")
    return key, slack.store.get(key.channel, post.response["ts"]), answer


def test_a_feedback_click_is_recorded_once_and_starts_no_run(app, slack, model):
    key, message, answer = answered_mention(app, slack, model)
    asked = len(model.requests)
    good = feedback_click(message, positive=True, channel=key.channel)

    assert click(app, good).status == 200
    assert click(app, good).status == 200  # the same payload again (a replay)
    again = feedback_click(message, positive=True, channel=key.channel)  # clicked twice
    assert click(app, again).status == 200
    app.wait_handled()

    rated = f"{OPENER} rated the answer of entry {answer}: good."
    assert contents(app, key).count(rated) == 1
    assert app.assistant.store.votes(key) == [Vote(answer, OPENER, "good")]
    assert len(model.requests) == asked  # a click starts no run

    # A change of mind is recorded, and is the vote kept.
    assert click(app, feedback_click(message, positive=False, channel=key.channel)).status == 200
    app.wait_handled()
    assert contents(app, key)[-1] == f"{OPENER} rated the answer of entry {answer}: bad."
    assert app.assistant.store.votes(key) == [Vote(answer, OPENER, "bad")]
    summary = next(s for s in app.assistant.store.threads() if s.key == key)
    assert (summary.good_votes, summary.bad_votes) == (0, 1)
    assert len(model.requests) == asked


def test_a_click_with_a_bad_signature_is_refused_and_records_nothing(app, slack, model):
    key, message, _ = answered_mention(app, slack, model)
    before = app.log(key)
    forged = feedback_click(message, positive=False, channel=key.channel)
    assert click(app, forged, signing_secret="not-the-secret").status == 401
    assert app.log(key) == before
    assert app.assistant.store.votes(key) == []


def test_feedback_in_a_panel_thread(app, slack, model):
    started = opened(app, slack)
    key = panel_key(started)
    ask(app, slack, model, started, "lunch?")
    post = slack.calls_to("chat.postMessage")[-1]
    message = slack.store.get(key.channel, post.response["ts"])
    assert click(app, feedback_click(message, positive=True, channel=key.channel)).status == 200
    app.wait_handled()
    [vote] = app.assistant.store.votes(key)
    assert vote.vote == "good" and contents(app, key)[-1].endswith(f"entry {vote.answer}: good.")


@pytest.mark.parametrize("odd", ["no-message", "no-user", "user-not-an-object"])
def test_a_signed_click_missing_its_parts_is_acknowledged_and_records_nothing(
    app, slack, model, odd
):
    key, message, _ = answered_mention(app, slack, model)
    payload = feedback_click(message, positive=True, channel=key.channel)
    if odd == "no-message":
        del payload["message"]
    elif odd == "no-user":
        del payload["user"]
    else:
        payload["user"] = "U0ALICE01"
    before = contents(app, key)
    assert click(app, payload).status == 200
    app.wait_handled()
    assert contents(app, key) == before


def test_prompts_slack_no_longer_takes_are_asked_once_per_workspace(app, slack, model, caplog):
    """The assistant view's removal (February 2027) may take setSuggestedPrompts with it, and no
    sessions method replaces it: after Slack says the method is gone, no panel or Messages tab
    opening in that workspace asks again, and each panel's log says why it has no prompts."""
    caplog.set_level(logging.WARNING, logger="assistant.panel.prompts")
    slack.fail("assistant.threads.setSuggestedPrompts", "unknown_method", times=10)
    first = panel_key(opened(app, slack))
    assert contents(app, first)[2].endswith(
        "The suggested prompts could not be shown: "
        "unknown_method (from assistant.threads.setSuggestedPrompts)."
    )
    second = panel_key(opened(app, slack))
    assert second != first
    assert contents(app, second)[2].endswith(
        "No suggested prompts were set: Slack refused them in this workspace (unknown_method)."
    )
    assert app.send_event(open_messages_tab(slack)).status == 200
    app.wait_handled()
    assert len(slack.calls_to("assistant.threads.setSuggestedPrompts")) == 1
    said = [r.getMessage() for r in caplog.records if r.name == "assistant.panel.prompts"]
    assert len(said) == 1 and "unknown_method" in said[0]
