"""A button clicked on a message in a thread, as a `block_actions` payload names it: who, in
which workspace, channel, thread and message, and the whole number its value carries. Every
field is checked (a payload is a request anyone signed in could forge); None when one is
missing or malformed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_SLACK_ID = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


@dataclass(frozen=True)
class ThreadClick:
    team: str
    channel: str
    person: str
    thread_ts: str
    message_ts: str
    number: int  # the button's value: an entry's index, a memory's id


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _id(value: object) -> str | None:
    text = value if isinstance(value, str) else ""
    return text if 2 <= len(text) <= 40 and all(c in _SLACK_ID for c in text) else None


def thread_click(body: dict[str, Any], action: dict[str, Any]) -> ThreadClick | None:
    value = str(action.get("value", ""))
    user, container = _object(body.get("user")), _object(body.get("container"))
    team = _id(_object(body.get("team")).get("id") or user.get("team_id"))
    channel = _id(container.get("channel_id"))
    person = _id(user.get("id"))
    thread_ts, message_ts = container.get("thread_ts"), container.get("message_ts")
    if not (value.isdigit() and len(value) <= 12 and team and channel and person) or not (
        isinstance(thread_ts, str) and isinstance(message_ts, str)
    ):
        return None
    return ThreadClick(team, channel, person, thread_ts, message_ts, int(value))
