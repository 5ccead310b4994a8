"""What Slack sends about an app's App Home, in Slack's shapes: the `app_home_opened` event
(wrap it with `assistant.fakes.requests.event_callback`), the `block_actions` payload of
a button clicked in the home tab, and the `view_submission` payload of a modal. Interactions
go over HTTP form-encoded and signed (`panel_events.signed_interaction_request`). Each
interaction carries a trigger id the fake Slack issued (`FakeSlack.issue_trigger`), good for
one `views.open` within 3 seconds, as Slack's are."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from assistant.fakes import ids

if TYPE_CHECKING:
    from assistant.fakes.slack.server import FakeSlack


def app_home_opened(
    *, user: str = ids.USER_ID, tab: str = "home", channel: str = ids.DM_CHANNEL_ID
) -> dict[str, Any]:
    return {
        "type": "app_home_opened",
        "user": user,
        "channel": channel,
        "tab": tab,
        "event_ts": ids.next_ts(),
    }


def _who(user: str, team: str) -> dict[str, Any]:
    return {
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": team},
        "team": {"id": team, "domain": ids.TEAM_DOMAIN},
        "api_app_id": ids.APP_ID,
        "token": "fake-verification-token",
        "enterprise": None,
        "is_enterprise_install": False,
    }


def home_click(
    slack: FakeSlack,
    view: dict[str, Any],
    action_id: str,
    value: str,
    *,
    user: str = ids.USER_ID,
    team: str = ids.TEAM_ID,
) -> dict[str, Any]:
    """A click on the button `action_id` with `value` in the published home `view`."""
    block_id = next(
        (
            block.get("block_id", "")
            for block in view["blocks"]
            for element in [block.get("accessory") or {}, *block.get("elements", [])]
            if element.get("action_id") == action_id and element.get("value") == value
        ),
        None,
    )
    if block_id is None:
        raise ValueError(f"the view has no {action_id} button with value {value!r}")
    return {
        "type": "block_actions",
        **_who(user, team),
        "container": {"type": "view", "view_id": view["id"]},
        "trigger_id": slack.issue_trigger(),
        "view": view,
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": block_id,
                "text": {"type": "plain_text", "text": "Edit"},
                "value": value,
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }


def view_submission(
    slack: FakeSlack,
    view: dict[str, Any],
    values: dict[str, dict[str, Any]],
    *,
    user: str = ids.USER_ID,
    team: str = ids.TEAM_ID,
) -> dict[str, Any]:
    """The modal `view` (as views.open answered) submitted with `values`: by block id, the
    element's state, e.g. `{"persona": {"type": "plain_text_input", "value": "…"}}`; input
    blocks not given are submitted as they were shown (their initial values), as Slack
    sends an input the person did not touch."""
    state: dict[str, dict[str, Any]] = {}
    for block in view["blocks"]:
        if block.get("type") != "input":
            continue
        element = block["element"]
        given = values.get(block["block_id"])
        untouched = {"type": element["type"], **_untouched(element)}
        state[block["block_id"]] = {element["action_id"]: given or untouched}
    return {
        "type": "view_submission",
        **_who(user, team),
        "trigger_id": slack.issue_trigger(),
        "view": {**view, "state": {"values": state}},
        "response_urls": [],
    }


def _untouched(element: dict[str, Any]) -> dict[str, Any]:
    kind = element["type"]
    if kind == "static_select":
        return {"selected_option": element.get("initial_option")}
    if kind == "conversations_select":
        return {"selected_conversation": element.get("initial_conversation")}
    if kind == "multi_users_select":
        return {"selected_users": element.get("initial_users", [])}
    if kind == "multi_static_select":
        return {"selected_options": element.get("initial_options", [])}
    return {"value": element.get("initial_value")}
