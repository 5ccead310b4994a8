"""The agent's Messages tab, its events dispatched to the app's Bolt app (Socket Mode:
test_messages_tab_socket_mode): opening it shows the suggested prompts at most once per person
per period, never a message; a top-level message in the DM starts a thread answered in that
thread; what the person views (`app_context_changed`) reaches the next prompt of the thread they
write in, once per change, a message they view quoted only when they may see it."""

from __future__ import annotations

import json

import pytest

from assistant.fakes import ids
from assistant.fakes import requests as event_requests
from assistant.fakes.events import builders as events
from assistant.fakes.events.panel import (
    app_context_changed,
    canvas_entity,
    channel_entity,
    list_entity,
    message_entity,
    open_messages_tab,
)
from assistant.fakes.openai import responses as replies
from context.channels import ChannelConfig
from context.storage import ThreadKey
from tests.harness import prompt_log, seed

# How requests are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

ME = f"<@{ids.USER_ID}>"
BOB = "U0BOB0001"


def answer(model, text: str = "Risotto!") -> None:
    model.script(
        replies.tool_calls(
            ("postMessage", {"text": text, "reasoning": "answer"}),
            ("finishRequest", {"reasoning": "done"}),
        )
    )


def ask(app, slack, model, text: str, thread_ts: str | None = None) -> dict:
    """The person writes in their DM with the app (top level, or in a thread); answered."""
    answer(model)
    before = len(slack.calls_to("chat.postMessage"))
    message = seed(slack, events.dm(text, thread_ts=thread_ts))
    assert app.send_event(message).status == 200
    slack.wait_for_call("chat.postMessage", count=before + 1)
    app.wait_idle()
    return message


def texts(app, key: ThreadKey) -> list:
    return [e["content"] for e in app.log(key)]


def test_opening_the_messages_tab_shows_the_prompts_once_and_posts_nothing(make_app, slack):
    prompts = [{"title": "Lunch", "message": "What should I eat?"}]
    app = make_app(
        assistant_greeting="Olá! Em que posso ajudar?",
        assistant_suggested_prompts=json.dumps(prompts),
    )
    opened = open_messages_tab(slack)
    payload = event_requests.event_callback(opened)
    assert app.send_event(opened, payload=payload).status == 200
    assert app.send_event(opened, payload=payload, retry_num=1).status == 200  # Slack's retry
    assert app.send_event(open_messages_tab(slack)).status == 200  # opened again soon after
    home = {**open_messages_tab(slack), "tab": "home"}
    assert app.send_event(home).status == 200
    app.wait_handled()

    (call,) = slack.calls_to("assistant.threads.setSuggestedPrompts")
    assert "thread_ts" not in call.params  # an agent's prompts are the DM's, not a thread's
    shown = slack.assistant_threads.prompts(ids.DM_CHANNEL_ID, "")
    assert list(shown.prompts) == prompts and shown.title == "Olá! Em que posso ajudar?"
    assert not slack.calls_to("chat.postMessage")
    # Another person opening it gets their own.
    assert app.send_event(open_messages_tab(slack, user=BOB, channel="D0BOBDM001")).status == 200
    app.wait_handled()
    assert len(slack.calls_to("assistant.threads.setSuggestedPrompts")) == 2


def test_the_prompts_are_shown_once_across_processes(make_app, app_stores, slack):
    first, second = make_app(), make_app(database_url=app_stores[0])  # one store
    for app in (first, second):
        assert app.send_event(open_messages_tab(slack)).status == 200
        app.wait_handled()
    assert len(slack.calls_to("assistant.threads.setSuggestedPrompts")) == 1


def test_a_top_level_message_starts_a_thread_answered_in_it(make_app, slack, model):
    app = make_app()
    assert app.send_event(open_messages_tab(slack)).status == 200
    question = ask(app, slack, model, "Lunch ideas?")
    key = ThreadKey(ids.TEAM_ID, ids.DM_CHANNEL_ID, question["ts"])
    assert slack.calls_to("chat.postMessage")[-1].params["thread_ts"] == question["ts"]

    ask(app, slack, model, "And for dinner?", thread_ts=question["ts"])
    assert slack.calls_to("chat.postMessage")[-1].params["thread_ts"] == question["ts"]
    users = [t["text"] for t in texts(app, key) if isinstance(t, dict) and "userid" in t]
    assert users == ["Lunch ideas?", "And for dinner?"]

    other = ask(app, slack, model, "A new topic")  # top level again: a thread of its own
    assert [t["text"] for t in texts(app, ThreadKey(ids.TEAM_ID, ids.DM_CHANNEL_ID, other["ts"]))
            if isinstance(t, dict) and "userid" in t] == ["A new topic"]  # fmt: skip


def test_what_the_person_views_reaches_the_next_prompt_once_per_change(make_app, slack, model):
    app = make_app()
    viewing = app_context_changed(
        channel_entity("C0WATCHED1"), canvas_entity("F0CANVAS01"), list_entity("F0LIST0001")
    )
    payload = event_requests.event_callback(viewing)
    assert app.send_event(viewing, payload=payload).status == 200
    assert app.send_event(viewing, payload=payload, retry_num=1).status == 200
    assert app.send_event(app_context_changed(channel_entity("C0WATCHED1"),
                                              canvas_entity("F0CANVAS01"),
                                              list_entity("F0LIST0001"))).status == 200  # fmt: skip
    app.wait_handled()

    question = ask(app, slack, model, "Summarise it")
    key = ThreadKey(ids.TEAM_ID, ids.DM_CHANNEL_ID, question["ts"])
    seen = f"{ME} is now viewing <#C0WATCHED1>, the canvas F0CANVAS01, the list F0LIST0001."
    logged = texts(app, key)
    assert logged[1] == seen and logged[2] == {"userid": ME, "text": "Summarise it"}
    prompt = [e["content"] for e in prompt_log(model.requests[-1])]
    assert seen in prompt

    ask(app, slack, model, "More", thread_ts=question["ts"])  # no change: nothing more
    assert texts(app, key).count(seen) == 1

    assert app.send_event(app_context_changed()).status == 200  # views nothing now
    app.wait_handled()
    other = ask(app, slack, model, "Hello again")  # recorded in the thread written in next
    elsewhere = texts(app, ThreadKey(ids.TEAM_ID, ids.DM_CHANNEL_ID, other["ts"]))
    assert elsewhere[1] == f"{ME} is no longer viewing anything the app can read."
    assert texts(app, key).count(seen) == 1


def test_a_thread_its_viewing_note_starts_gets_the_persona_a_dm_thread_gets(make_app, slack, model):
    app = make_app()
    store = app.assistant.store
    store.set_channel_config(ChannelConfig(team=ids.TEAM_ID, channel="*", persona="Be brief."))
    assert app.send_event(app_context_changed(channel_entity("C0WATCHED1"))).status == 200
    app.wait_handled()
    question = ask(app, slack, model, "Summarise it")
    logged = texts(app, ThreadKey(ids.TEAM_ID, ids.DM_CHANNEL_ID, question["ts"]))
    assert logged[0] == "Be brief."  # the workspace's default, not the deployment's
    assert logged[1] == f"{ME} is now viewing <#C0WATCHED1>."

    # The DM's own settings come first, as for any message in it.
    dm = ChannelConfig(team=ids.TEAM_ID, channel=ids.DM_CHANNEL_ID, persona="Speak French.")
    store.set_channel_config(dm)
    assert app.send_event(app_context_changed(channel_entity("C0WATCHED2"))).status == 200
    app.wait_handled()
    question = ask(app, slack, model, "Et maintenant ?")
    logged = texts(app, ThreadKey(ids.TEAM_ID, ids.DM_CHANNEL_ID, question["ts"]))
    assert logged[:2] == ["Speak French.", f"{ME} is now viewing <#C0WATCHED2>."]


def test_a_viewed_message_is_quoted_only_if_the_person_may_see_it(make_app, slack, model):
    app = make_app()
    slack.conversations.public("C0PUBLIC01", [ids.USER_ID])
    shown = slack.add_message("C0PUBLIC01", user=BOB, text="The plan is ready.")
    slack.conversations.private("C0SECRET01", [BOB])
    secret = slack.add_message("C0SECRET01", user=BOB, text="Layoffs on Friday.")

    assert app.send_event(app_context_changed(message_entity("C0PUBLIC01", shown["ts"])))
    app.wait_handled()
    first = ask(app, slack, model, "What does it mean?")
    logged = texts(app, ThreadKey(ids.TEAM_ID, ids.DM_CHANNEL_ID, first["ts"]))
    assert logged[1] == (
        f'{ME} is now viewing a message in <#C0PUBLIC01>.\n<@{BOB}> said:\n"The plan is ready."'
    )

    assert app.send_event(app_context_changed(message_entity("C0SECRET01", secret["ts"])))
    app.wait_handled()
    second = ask(app, slack, model, "And this one?", thread_ts=first["ts"])
    logged = texts(app, ThreadKey(ids.TEAM_ID, ids.DM_CHANNEL_ID, second["thread_ts"]))
    note = f"(The message is in a conversation {ME} may not see, so it was not read.)"
    assert logged[-4] == f"{ME} is now viewing a message in <#C0SECRET01>.\n{note}"
    assert "Layoffs" not in json.dumps(model.requests)
    reads = [c for c in slack.calls if c.params.get("channel") == "C0SECRET01"
             and c.method.startswith("conversations.") and c.method != "conversations.info"
             and c.method != "conversations.members"]  # fmt: skip
    assert reads == []
