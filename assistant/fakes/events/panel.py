"""Builders for what Slack sends about its assistant panel and agent view, in Slack's shapes:
the `assistant_thread_started` and `assistant_thread_context_changed` events, the Messages
tab's `app_home_opened` and `app_context_changed` (with its entities), the agent session's
`agent_session_title_changed` (after `FakeSlack.agents.rename_by_person`, which plays the
rename) (wrap them with `assistant.fakes.requests.event_callback`, or send them with
`FakeSlack.send_event`), and the
`block_actions` payload of a click on an answer's feedback buttons.

Over HTTP a block action arrives form-encoded (`payload=<JSON>`), signed like an event
(`signed_interaction_request`); over Socket Mode it is an `interactive` envelope
(`FakeSlack.send_envelope(payload, type="interactive")`).
"""

from __future__ import annotations

import copy
import json
import time
import uuid
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from assistant.fakes import ids
from assistant.fakes.requests import sign

if TYPE_CHECKING:
    from assistant.fakes.slack.server import FakeSlack

ROOT_TEXT = "New Assistant Thread"


def open_panel(
    slack: FakeSlack,
    *,
    user: str = ids.USER_ID,
    channel: str = ids.DM_CHANNEL_ID,
    viewing: str | None = ids.CHANNEL_ID,
) -> dict[str, Any]:
    """A person opens the assistant panel while viewing `viewing` (None: no channel): Slack
    starts a thread in the app's DM under a root message of subtype `assistant_app_thread`,
    and sends `assistant_thread_started` (returned)."""
    root = slack.add_message(
        channel,
        user=user,
        text=ROOT_TEXT,
        subtype="assistant_app_thread",
        assistant_app_thread={"title": ROOT_TEXT, "title_blocks": [], "artifacts": []},
    )
    return thread_started(user=user, channel=channel, thread_ts=root["ts"], viewing=viewing)


def thread_started(
    *,
    thread_ts: str,
    user: str = ids.USER_ID,
    channel: str = ids.DM_CHANNEL_ID,
    viewing: str | None = ids.CHANNEL_ID,
    team: str = ids.TEAM_ID,
) -> dict[str, Any]:
    return _assistant_event("assistant_thread_started", thread_ts, user, channel, viewing, team)


def context_changed(
    *,
    thread_ts: str,
    viewing: str | None,
    user: str = ids.USER_ID,
    channel: str = ids.DM_CHANNEL_ID,
    team: str = ids.TEAM_ID,
) -> dict[str, Any]:
    """The person, the panel open, now looks at `viewing` (None: no channel)."""
    return _assistant_event(
        "assistant_thread_context_changed", thread_ts, user, channel, viewing, team
    )


def _assistant_event(
    type: str, thread_ts: str, user: str, channel: str, viewing: str | None, team: str
) -> dict[str, Any]:
    context: dict[str, Any] = {}
    if viewing is not None:
        context = {"channel_id": viewing, "team_id": team, "enterprise_id": None}
    return {
        "type": type,
        "assistant_thread": {
            "user_id": user,
            "context": context,
            "channel_id": channel,
            "thread_ts": thread_ts,
        },
        "event_ts": ids.next_ts(),
    }


def open_messages_tab(
    slack: FakeSlack, *, user: str = ids.USER_ID, channel: str = ids.DM_CHANNEL_ID
) -> dict[str, Any]:
    """A person opens the app's Messages tab (agent view): their DM with the app exists from
    then on, and Slack sends `app_home_opened` with `tab: "messages"` (returned)."""
    slack.store.messages.setdefault(channel, {})
    return {
        "type": "app_home_opened",
        "user": user,
        "channel": channel,
        "tab": "messages",
        "event_ts": ids.next_ts(),
    }


def channel_entity(channel: str, team: str = ids.TEAM_ID) -> dict[str, Any]:
    return {"type": "slack#/types/channel_id", "value": channel, "team_id": team}


def canvas_entity(canvas: str, team: str = ids.TEAM_ID) -> dict[str, Any]:
    return {"type": "slack#/types/canvas_id", "value": canvas, "team_id": team}


def list_entity(list_id: str, team: str = ids.TEAM_ID) -> dict[str, Any]:
    return {"type": "slack#/types/list_id", "value": list_id, "team_id": team}


def message_entity(channel: str, ts: str, team: str = ids.TEAM_ID) -> dict[str, Any]:
    value = {"channel_id": channel, "message_ts": ts}
    return {"type": "slack#/types/message_context", "value": value, "team_id": team}


def app_context_changed(
    *entities: dict[str, Any], user: str = ids.USER_ID, channel: str = ids.DM_CHANNEL_ID
) -> dict[str, Any]:
    """The person, in their DM with the agent, now views `entities` (most relevant first;
    none: Slack sends an empty `context`). The fields are those of Slack's own event type
    (@slack/types `AppContextChangedEvent`: `user`, `channel`, `context`, `event_ts`); the
    event's reference page shows an example with `context` alone (the person only in the
    envelope's `authorizations`), which the app would refuse as malformed."""
    context = {"entities": list(entities)} if entities else {}
    return {
        "type": "app_context_changed",
        "user": user,
        "channel": channel,
        "context": context,
        "event_ts": ids.next_ts(),
    }


def click_frame(message: dict[str, Any], *, channel: str, user: str, team: str) -> dict[str, Any]:
    """A `block_actions` payload of a click on a button of `message`, but its `actions`."""
    return {
        "type": "block_actions",
        "user": {"id": user, "username": "alice", "name": "alice", "team_id": team},
        "api_app_id": ids.APP_ID,
        "token": "fake-verification-token",
        "container": {
            "type": "message",
            "message_ts": message["ts"],
            "channel_id": channel,
            "is_ephemeral": False,
            "thread_ts": message.get("thread_ts"),
        },
        "trigger_id": f"{int(time.time())}.{uuid.uuid4().hex[:12]}",
        "team": {"id": team, "domain": ids.TEAM_DOMAIN},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel, "name": "directmessage" if channel[:1] == "D" else channel},
        "message": copy.deepcopy(message),
        "state": {"values": {}},
        "response_url": f"https://hooks.slack.com/actions/{team}/1/{uuid.uuid4().hex[:24]}",
    }


def feedback_click(
    message: dict[str, Any],
    positive: bool,
    *,
    channel: str,
    user: str = ids.USER_ID,
    team: str = ids.TEAM_ID,
    action_ts: str | None = None,
) -> dict[str, Any]:
    """The `block_actions` payload of a click on the feedback buttons of `message` (as the
    fake stores it: `FakeSlack.store.get`, or a chat.postMessage answer's `message`)."""
    block, element = _feedback_buttons(message)
    button = element["positive_button" if positive else "negative_button"]
    return {
        **click_frame(message, channel=channel, user=user, team=team),
        "actions": [
            {
                "type": "feedback_buttons",
                "action_id": element["action_id"],
                "block_id": block["block_id"],
                "text": button["text"],
                "value": button["value"],
                "action_ts": action_ts or f"{time.time():.6f}",
            }
        ],
    }


def button_click(
    message: dict[str, Any],
    action_id: str,
    *,
    channel: str,
    user: str = ids.USER_ID,
    team: str = ids.TEAM_ID,
) -> dict[str, Any]:
    """The `block_actions` payload of a click on the button `action_id` of an `actions`
    block of `message` (as the fake stores it), e.g. an approval's Allow or Deny."""
    for block in message.get("blocks") or []:
        for element in block.get("elements") or []:
            if block.get("type") == "actions" and element.get("action_id") == action_id:
                payload = click_frame(message, channel=channel, user=user, team=team)
                payload["actions"] = [
                    {
                        "type": "button",
                        "action_id": action_id,
                        "block_id": block.get("block_id") or uuid.uuid4().hex[:5],
                        "text": element["text"],
                        "value": element.get("value", ""),
                        "action_ts": f"{time.time():.6f}",
                    }
                ]
                return payload
    raise ValueError(f"message {message.get('ts')} has no {action_id} button")


def _feedback_buttons(message: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    for block in message.get("blocks") or []:
        for element in block.get("elements") or []:
            if block.get("type") == "context_actions" and element["type"] == "feedback_buttons":
                # Slack gives every block an id when the app gives none.
                return {"block_id": uuid.uuid4().hex[:5], **block}, element
    raise ValueError(f"message {message.get('ts')} has no feedback buttons")


def signed_interaction_request(
    payload: dict[str, Any],
    *,
    signing_secret: str = ids.SIGNING_SECRET,
    timestamp: int | None = None,
) -> tuple[bytes, dict[str, str]]:
    """Body and headers of an interaction POSTed to the app, as Slack sends it:
    `payload=<JSON>` form-encoded, signed over those exact bytes."""
    body = urlencode({"payload": json.dumps(payload, ensure_ascii=False)}).encode()
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        **sign(body, signing_secret, timestamp),
    }
    return body, headers


def title_changed(
    channel: str,
    thread_ts: str,
    title: str,
    previous: str | None = None,
    user: str = ids.USER_ID,
    team: str = ids.TEAM_ID,
) -> dict[str, Any]:
    """The `agent_session_title_changed` event in Slack's shape (docs.slack.dev, the event's
    reference): `previous_title` omitted when the session had no title before."""
    event: dict[str, Any] = {
        "type": "agent_session_title_changed",
        "channel": channel,
        "thread_ts": thread_ts,
        "title": title,
        "user": user,
        "team_id": team,
        "event_ts": ids.next_ts(),
    }
    if previous is not None:
        event["previous_title"] = previous
    return event
