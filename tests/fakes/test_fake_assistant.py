"""The fake Slack's assistant panel: `assistant.threads.*` with Slack's argument rules, driven
through slack-sdk's own client, and the panel's payloads in the shapes Bolt recognizes."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from urllib.parse import parse_qs

import pytest
from slack_bolt.request.payload_utils import (
    is_assistant_thread_context_changed_event,
    is_assistant_thread_started_event,
    is_user_message_event_in_assistant_thread,
    to_action,
)
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier

from assistant.fakes import FakeSlack, ids
from assistant.fakes import requests as event_requests
from assistant.fakes.events import builders as events
from assistant.fakes.events.panel import (
    context_changed,
    feedback_click,
    open_panel,
    signed_interaction_request,
)

DM = ids.DM_CHANNEL_ID


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def client(slack: FakeSlack) -> WebClient:
    return WebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)


@pytest.fixture
def thread_ts(slack: FakeSlack) -> str:
    return open_panel(slack)["assistant_thread"]["thread_ts"]


def refused(call, error: str) -> None:
    with pytest.raises(SlackApiError) as raised:
        call()
    assert raised.value.response["error"] == error


def test_set_status_keeps_the_status_and_an_empty_one_clears_it(slack, client, thread_ts):
    client.assistant_threads_setStatus(
        channel_id=DM, thread_ts=thread_ts, status="is thinking…", loading_messages=["a", "b"]
    )
    status = slack.assistant_threads.status(DM, thread_ts)
    assert (status.status, status.loading_messages) == ("is thinking…", ("a", "b"))
    client.assistant_threads_setStatus(channel_id=DM, thread_ts=thread_ts, status="")
    assert slack.assistant_threads.status(DM, thread_ts).status == ""


def test_set_status_follows_slacks_argument_rules(client, thread_ts):
    eleven = [f"m{n}" for n in range(11)]
    refused(
        lambda: client.assistant_threads_setStatus(
            channel_id=DM, thread_ts=thread_ts, status="x", loading_messages=eleven
        ),
        "invalid_arguments",
    )
    no_status = {"channel_id": DM, "thread_ts": thread_ts}
    refused(
        lambda: client.api_call("assistant.threads.setStatus", json=no_status),
        "invalid_arguments",
    )
    refused(
        lambda: client.assistant_threads_setStatus(
            channel_id="D0NOWHERE1", thread_ts="1.2", status="x"
        ),
        "channel_not_found",
    )
    refused(
        lambda: client.assistant_threads_setStatus(channel_id=DM, thread_ts="1.2", status="x"),
        "invalid_thread_ts",
    )


def test_set_suggested_prompts_takes_one_to_four_whole_prompts(slack, client, thread_ts):
    four = [{"title": f"t{n}", "message": f"m{n}"} for n in range(4)]
    client.assistant_threads_setSuggestedPrompts(
        channel_id=DM, thread_ts=thread_ts, prompts=four, title="Try these"
    )
    kept = slack.assistant_threads.prompts(DM, thread_ts)
    assert (list(kept.prompts), kept.title) == (four, "Try these")
    for prompts in ([], [*four, {"title": "t4", "message": "m4"}], [{"title": "only"}]):
        refused(
            lambda prompts=prompts: client.assistant_threads_setSuggestedPrompts(
                channel_id=DM, thread_ts=thread_ts, prompts=prompts
            ),
            "invalid_arguments",
        )


def test_set_title(slack, client, thread_ts):
    client.assistant_threads_setTitle(channel_id=DM, thread_ts=thread_ts, title="Lunch")
    assert slack.assistant_threads.title(DM, thread_ts) == "Lunch"
    refused(
        lambda: client.assistant_threads_setTitle(channel_id=DM, thread_ts=thread_ts, title=" "),
        "invalid_arguments",
    )


def test_the_panels_events_are_the_shapes_bolt_knows(slack):
    started = open_panel(slack, viewing="C0WATCHED1")
    thread = started["assistant_thread"]
    assert slack.thread(DM, thread["thread_ts"])[0]["subtype"] == "assistant_app_thread"
    assert thread["context"]["channel_id"] == "C0WATCHED1"
    assert is_assistant_thread_started_event(event_requests.event_callback(started))
    moved = context_changed(thread_ts=thread["thread_ts"], viewing="C0OTHER001")
    assert is_assistant_thread_context_changed_event(event_requests.event_callback(moved))
    asked = events.dm("hi", thread_ts=thread["thread_ts"])
    assert is_user_message_event_in_assistant_thread(event_requests.event_callback(asked))


def test_a_feedback_click_is_a_signed_form_encoded_block_action(slack, client):
    buttons = {
        "type": "context_actions",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": "answer_feedback",
                "positive_button": {"text": {"type": "plain_text", "text": "👍"}, "value": "up"},
                "negative_button": {"text": {"type": "plain_text", "text": "👎"}, "value": "down"},
            }
        ],
    }
    posted = client.chat_postMessage(channel=ids.CHANNEL_ID, text="Pizza.", blocks=[buttons])
    message = slack.store.get(ids.CHANNEL_ID, posted["ts"])
    payload = feedback_click(message, positive=False, channel=ids.CHANNEL_ID)
    action = to_action(payload)
    assert action["action_id"] == "answer_feedback" and action["value"] == "down"
    assert payload["message"]["ts"] == posted["ts"]

    body, headers = signed_interaction_request(payload)
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert json.loads(parse_qs(body.decode())["payload"][0]) == payload
    verifier = SignatureVerifier(ids.SIGNING_SECRET)
    assert verifier.is_valid(
        body, headers["X-Slack-Request-Timestamp"], headers["X-Slack-Signature"]
    )
    assert abs(int(headers["X-Slack-Request-Timestamp"]) - time.time()) < 60

    with pytest.raises(ValueError, match="no feedback buttons"):
        feedback_click(slack.add_message(ids.CHANNEL_ID, text="plain"), True, channel="C")
