"""A persona and rules per channel, end to end (docs/configuration.md, "Configuring channels"):
set in the App Home by an admin (a non-admin refused), a new thread starting with its channel's
persona while an old one keeps its own, the channel's model asked and its name and icon on the
posts, a person who may not use the bot told once and not answered, a channel turned off. Each
event and click is signed and handed to the app's Bolt app in process (tests/bolt_tier.py: what
is tested is how they are handled, not the web server), every Slack and model call still goes to
the fakes over HTTP."""

from __future__ import annotations

import json

import pytest

from assistant.fakes import ids
from assistant.fakes import requests as event_requests
from assistant.fakes.events import builders as events
from assistant.fakes.events.home import app_home_opened, home_click, view_submission
from assistant.fakes.events.panel import signed_interaction_request
from assistant.fakes.openai import responses as replies
from assistant.intake.channel_gate import NOTE, refusal_line
from assistant.panel.home_views import EDIT_ACTION, READ_ONLY
from assistant.run.loop.agent import NO_ONE_ALLOWED
from context.channels import ChannelConfig
from tests.app.test_streaming import ANSWER, FINISH, answer_streaming, post
from tests.harness import answered_log, mention, script_answers, seed, thread_of

# How requests are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = [pytest.mark.app_backend, pytest.mark.listeners]

ADMIN = "U0ADMIN001"
BOB = "U0BOB00001"
GROUP = "S0GROUP001"


def interact(app, payload: dict) -> tuple[int, dict]:
    body, headers = signed_interaction_request(payload)
    response = app.request("POST", "/slack/events", body, headers)
    return response.status, json.loads(response.body or b"{}")


def open_home(app, slack, user: str) -> dict:
    before = len(slack.calls_to("views.publish"))
    assert app.send_event(app_home_opened(user=user)).status == 200
    slack.wait_for_call("views.publish", count=before + 1)
    return slack.home_tabs[user]


def buttons(view: dict) -> list[str]:
    return [
        element["value"]
        for block in view["blocks"]
        for element in [block.get("accessory") or {}, *block.get("elements", [])]
        if element.get("action_id") == EDIT_ACTION
    ]


def text_of(view: dict) -> str:
    return json.dumps(view["blocks"])


def test_an_admin_sets_a_channel_persona_in_the_app_home_and_a_non_admin_cannot(app, slack, model):
    slack.add_user(ADMIN, "ada", is_admin=True)
    # Anyone sees the settings, read-only.
    tab = open_home(app, slack, ids.USER_ID)
    assert buttons(tab) == [] and READ_ONLY in text_of(tab)

    tab = open_home(app, slack, ADMIN)
    assert buttons(tab) == ["*", ""]
    status, _ = interact(app, home_click(slack, tab, EDIT_ACTION, "", user=ADMIN))
    assert status == 200
    modal = slack.modals[-1]
    assert modal["type"] == "modal" and modal["private_metadata"] == ""
    values = {
        "channel": {"type": "conversations_select", "selected_conversation": ids.CHANNEL_ID},
        "persona": {"type": "plain_text_input", "value": "You are a pirate. Say arr."},
        "model": {"type": "plain_text_input", "value": "gpt-pirate"},
        "username": {"type": "plain_text_input", "value": "Captain"},
        "icon_emoji": {"type": "plain_text_input", "value": ":pirate_flag:"},
    }
    # A non-admin's submission of the same modal (forged: their tab has no button) changes
    # nothing and says why, under the modal's first input.
    status, answer = interact(app, view_submission(slack, modal, values, user=ids.USER_ID))
    refused = {"response_action": "errors", "errors": {"channel": READ_ONLY}}
    assert (status, answer) == (200, refused)
    assert app.assistant.store.channel_config(ids.TEAM_ID, ids.CHANNEL_ID) is None

    status, answer = interact(app, view_submission(slack, modal, values, user=ADMIN))
    assert (status, answer) == (200, {})
    kept = app.assistant.store.channel_config(ids.TEAM_ID, ids.CHANNEL_ID)
    assert (kept.persona, kept.model, kept.updated_by) == (
        "You are a pirate. Say arr.",
        "gpt-pirate",
        ADMIN,
    )
    assert "You are a pirate" in text_of(slack.home_tabs[ADMIN])  # the tab shows it now
    assert buttons(slack.home_tabs[ADMIN]) == ["*", ids.CHANNEL_ID, ""]

    # A bad value is shown in the modal, under its input.
    bad = {**values, "icon_emoji": {"type": "plain_text_input", "value": "pirate"}}
    status, answer = interact(app, view_submission(slack, modal, bad, user=ADMIN))
    assert answer["response_action"] == "errors" and list(answer["errors"]) == ["icon_emoji"]

    # The channel's next thread: its persona as entry 0, its model, its name and icon.
    script_answers(model)
    log = answered_log(app, slack, mention(slack, "where is the treasure?"))
    assert log[0]["content"] == "You are a pirate. Say arr."
    assert model.requests[-1]["model"] == "gpt-pirate"
    post = slack.calls_to("chat.postMessage")[-1].params
    assert (post["username"], post["icon_emoji"]) == ("Captain", ":pirate_flag:")


def test_a_new_thread_starts_with_the_channel_persona_while_an_old_thread_keeps_its_own(
    app, slack, model
):
    script_answers(model, 3)
    old = mention(slack, "hello")
    assert answered_log(app, slack, old)[0]["content"] == app.settings.persona.instructions()

    store = app.assistant.store
    store.set_channel_config(ChannelConfig(team=ids.TEAM_ID, channel="*", persona="Be brief."))
    store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel=ids.CHANNEL_ID, persona="Speak French.")
    )
    other_channel = "C0OTHER001"
    slack.conversations.public(other_channel, [ids.USER_ID])

    follow_up = mention(slack, "and again", thread_ts=old["ts"])
    log = answered_log(app, slack, follow_up)
    assert log[0]["content"] == app.settings.persona.instructions()  # the old thread keeps its own
    assert json.loads(model.requests[-1]["messages"][1]["content"])[0]["content"] == (
        app.settings.persona.instructions()
    )
    assert answered_log(app, slack, mention(slack, "bonjour"))[0]["content"] == "Speak French."
    # A channel with nothing of its own takes the workspace's default.
    there = mention(slack, "hi", channel=other_channel)
    assert answered_log(app, slack, there)[0]["content"] == "Be brief."


def test_a_person_not_allowed_gets_one_note_and_no_run(app, slack, model):
    slack.add_user(BOB, "bob")
    slack.add_usergroup(GROUP, [BOB])
    slack.conversations.public(ids.CHANNEL_ID, [ids.USER_ID, BOB], name="general")
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel=ids.CHANNEL_ID, access="listed", groups=(GROUP,))
    )
    # A mention of their own: one ephemeral note, no log, no run.
    refused = mention(slack, "hello?")
    assert app.send_event(refused).status == 200
    app.wait_handled()
    assert [(e["user"], e["text"]) for e in slack.ephemerals] == [(ids.USER_ID, NOTE)]
    assert "thread_ts" not in slack.ephemerals[0]
    assert not app.assistant.store.has_thread(thread_of(refused))
    assert model.requests == []

    # In a thread a member of the group started: told once (a system line), never answered.
    script_answers(model)
    started = mention(slack, "a question", user=BOB)
    answered_log(app, slack, started)
    asked = len(model.requests)
    for text in ("me too", "still me"):
        reply = seed(slack, events.message(text, thread_ts=started["ts"], ts=None))
        assert app.send_event(reply).status == 200
        app.wait_handled()
    assert len(slack.ephemerals) == 2 and slack.ephemerals[1]["thread_ts"] == started["ts"]
    log = app.log(thread_of(started))
    assert [e["content"] for e in log[-1:]] == [refusal_line(ids.USER_ID)]
    assert sum(e["content"] == refusal_line(ids.USER_ID) for e in log) == 1
    assert not any(e["role"] == "user" and "me too" in str(e["content"]) for e in log)
    assert len(model.requests) == asked
    assert len(slack.calls_to("usergroups.users.list")) == 1  # the members kept a while


def test_a_channel_turned_off_takes_nothing(app, slack, model):
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel=ids.CHANNEL_ID, enabled=False)
    )
    event = mention(slack, "anyone?")
    assert app.send_event(event, payload=event_requests.event_callback(event)).status == 200
    app.wait_handled()
    assert not app.assistant.store.has_thread(thread_of(event))
    assert model.requests == [] and slack.ephemerals == []
    assert slack.calls_to("reactions.add") == []


def test_a_named_persona_from_the_file_and_the_channel_s_name_on_a_streamed_answer(
    make_app, slack, model, tmp_path
):
    personas = tmp_path / "personas.yaml"
    personas.write_text("pirate: |\n  You are a pirate.\nclerk: You are a clerk.\n")
    app = make_app(assistant_personas_file=str(personas), assistant_stream="auto")
    app.assistant.store.set_channel_config(ChannelConfig(
        team=ids.TEAM_ID, channel=ids.CHANNEL_ID, persona_name="pirate", username="Captain",
        icon_url="https://icons.example/ship.png",
    ))  # fmt: skip
    answer = replies.tool_calls(post(ANSWER), FINISH)
    log = answer_streaming(app, slack, model, mention(slack, "ahoy"), answer)
    assert log[0]["content"] == "You are a pirate."
    (start,) = slack.calls_to("chat.startStream")
    assert (start.params["username"], start.params["icon_url"]) == (
        "Captain",
        "https://icons.example/ship.png",
    )
    assert slack.calls_to("chat.postMessage") == []


def listed_by_group(app, slack) -> None:
    """The channel takes BOB (a member of GROUP) and no one else."""
    slack.add_user(BOB, "bob")
    slack.add_usergroup(GROUP, [BOB])
    slack.conversations.public(ids.CHANNEL_ID, [ids.USER_ID, BOB], name="general")
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel=ids.CHANNEL_ID, access="listed", groups=(GROUP,))
    )


def test_a_member_is_answered_once_slack_lists_the_group_again_never_refused(app, slack, model):
    listed_by_group(app, slack)
    end_outage = slack.outage("usergroups.users.list", status=200, error="internal_error")
    script_answers(model)
    asked = mention(slack, "a question", user=BOB)
    assert app.send_event(asked).status == 200
    # The ack could not ask Slack, nor the run: it is deferred, as for any Slack outage.
    slack.wait_for_call("usergroups.users.list", count=2)
    app.wait_listeners()
    end_outage()
    slack.wait_for_call("chat.postMessage")
    app.wait_idle()

    assert slack.ephemerals == []  # never told they may not
    log = app.log(thread_of(asked))
    assert log[1]["content"]["userid"] == f"<@{BOB}>"
    deferred = [e["content"] for e in log if "tried again until Slack answers" in str(e["content"])]
    assert len(deferred) == 1 and "usergroups.users.list" in deferred[0]
    assert log[-1]["content"]["toolCall"] == "finishRequest"
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == ["Seen."]


def test_a_person_slack_could_not_decide_on_is_told_by_the_run_when_it_can(app, slack, model):
    listed_by_group(app, slack)
    slack.fail("usergroups.users.list", "internal_error")  # the ack's call only
    asked = mention(slack, "a question")  # ids.USER_ID, not in the group
    assert app.send_event(asked).status == 200
    app.wait_handled()

    assert [(e["user"], e["text"]) for e in slack.ephemerals] == [(ids.USER_ID, NOTE)]
    log = app.log(thread_of(asked))
    assert [e["content"] for e in log[-2:]] == [refusal_line(ids.USER_ID), NO_ONE_ALLOWED]
    assert model.requests == [] and slack.calls_to("chat.postMessage") == []


def test_the_tools_a_channel_has_round_trip_through_the_app_home(app, slack, model):
    """Slack search, the types it covers and the MCP servers or tools: set in the modal,
    kept, shown in the tab, shown again in the modal; a malformed tool name refused under
    its input; `none` for no server at all."""
    slack.add_user(ADMIN, "ada", is_admin=True)
    tab = open_home(app, slack, ADMIN)
    status, _ = interact(app, home_click(slack, tab, EDIT_ACTION, "*", user=ADMIN))
    assert status == 200
    modal = slack.modals[-1]
    on = {"text": {"type": "plain_text", "text": "On"}, "value": "on"}
    values = {
        "slack_search": {"type": "static_select", "selected_option": on},
        "search_channel_types": {
            "type": "multi_static_select",
            "selected_options": [{"value": "public_channel"}, {"value": "private_channel"}],
        },
        "tool_servers": {"type": "plain_text_input", "value": "shop, files__read_file"},
    }
    bad = {**values, "tool_servers": {"type": "plain_text_input", "value": "shop; rm -rf"}}
    status, answer = interact(app, view_submission(slack, modal, bad, user=ADMIN))
    assert answer["response_action"] == "errors" and list(answer["errors"]) == ["tool_servers"]
    assert app.assistant.store.channel_config(ids.TEAM_ID, "*") is None

    status, answer = interact(app, view_submission(slack, modal, values, user=ADMIN))
    assert (status, answer) == (200, {})
    kept = app.assistant.store.channel_config(ids.TEAM_ID, "*")
    assert (kept.slack_search, kept.search_channel_types, kept.tool_servers) == (
        True,
        ("public_channel", "private_channel"),
        ("shop", "files__read_file"),
    )
    assert "Slack search; search in public_channel, private_channel" in text_of(
        slack.home_tabs[ADMIN]
    )

    # The modal shows them again; submitted untouched they stay; `none` is no server.
    status, _ = interact(app, home_click(slack, slack.home_tabs[ADMIN], EDIT_ACTION, "*",
                                         user=ADMIN))  # fmt: skip
    modal = slack.modals[-1]
    shown = {b["block_id"]: b["element"] for b in modal["blocks"] if b["type"] == "input"}
    assert shown["slack_search"]["initial_option"]["value"] == "on"
    assert [o["value"] for o in shown["search_channel_types"]["initial_options"]] == [
        "public_channel",
        "private_channel",
    ]
    assert shown["tool_servers"]["initial_value"] == "shop, files__read_file"
    none = {"tool_servers": {"type": "plain_text_input", "value": "none"}}
    status, answer = interact(app, view_submission(slack, modal, none, user=ADMIN))
    assert (status, answer) == (200, {})
    kept = app.assistant.store.channel_config(ids.TEAM_ID, "*")
    assert (kept.slack_search, kept.search_channel_types, kept.tool_servers) == (
        True,
        ("public_channel", "private_channel"),
        (),
    )
    assert "*no* MCP tools" in text_of(slack.home_tabs[ADMIN])

    # The workspace default turns search on for a channel with nothing of its own.
    script_answers(model)
    answered_log(app, slack, mention(slack, "hello"))
    assert "searchSlack" in [t["function"]["name"] for t in model.requests[-1]["tools"]]
