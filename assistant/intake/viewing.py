"""What a person is viewing in Slack while they talk to the agent (`app_context_changed`,
docs/log-format.md#what-the-person-is-viewing): kept per person and DM when it changes, and
written into the log once per change, as a system entry in the thread they write in next,
just before their message, so the model's next prompt knows it.

The entities Slack sends (most relevant first): a channel, a canvas, a list, a message. A
message is read only if the person may see its conversation (`LinkAccess.may_see`, the rule
of linked messages), and is then quoted as a linked message is; otherwise a note says why
it was not read. Entity types the app does not know are left out."""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.intake import references
from assistant.intake.deadline import until
from assistant.intake.link_access import LinkAccess, not_visible
from assistant.slack.connection import SLACK_UNREACHED, slack_error

log = logging.getLogger(__name__)

_ID = re.compile(r"^[A-Z0-9]{2,64}$")
_TS = re.compile(r"^\d{1,10}\.\d{1,6}$")
TYPE = "slack#/types/"  # the prefix of every entity type
NOT_READ_IN_TIME = "(The message could not be read in time.)"


def described(entity: dict[str, Any]) -> str | None:
    """One entity in the log's words, None for one the app does not know or cannot read."""
    kind, value = str(entity.get("type", "")).removeprefix(TYPE), entity.get("value")
    if kind == "message_context":
        place = message_place(entity)
        return f"a message in <#{place[0]}>" if place else None
    if not isinstance(value, str) or not _ID.match(value):
        return None
    return {
        "channel_id": f"<#{value}>",
        "canvas_id": f"the canvas {value}",
        "list_id": f"the list {value}",
    }.get(kind)


def message_place(entity: dict[str, Any]) -> tuple[str, str] | None:
    """A message context's (channel, ts), None when the entity is not one or is malformed."""
    value = entity.get("value")
    if str(entity.get("type", "")).removeprefix(TYPE) != "message_context":
        return None
    if not isinstance(value, dict):
        return None
    channel, ts = value.get("channel_id"), value.get("message_ts")
    if not (isinstance(channel, str) and _ID.match(channel)):
        return None
    if not (isinstance(ts, str) and _TS.match(ts)):
        return None
    return channel, ts


async def viewing_text(
    entities: list[dict[str, Any]],
    team: str,
    user: str,
    client: AsyncWebClient,
    access: LinkAccess,
    bot_user_id: str | None,
    deadline: float,
) -> str:
    """The system entry for what `user` now views: `<@U> is now viewing <#C>, the canvas F.`
    and, for a message they may see, its quote (read until `deadline`)."""
    names = [name for name in map(described, entities) if name]
    if not names:
        return f"<@{user}> is no longer viewing anything the app can read."
    lines = [f"<@{user}> is now viewing {', '.join(names)}."]
    places = [place for place in map(message_place, entities) if place]
    if places:
        (quote,) = await until(
            deadline,
            [_quote(places[0], team, user, client, access, bot_user_id)],
            [NOT_READ_IN_TIME],
        )
        lines.append(quote)
    return "\n".join(lines)


async def _quote(
    place: tuple[str, str],
    team: str,
    user: str,
    client: AsyncWebClient,
    access: LinkAccess,
    bot_user_id: str | None,
) -> str:
    channel, ts = place
    try:
        if not await access.may_see(team, user, channel):
            return not_visible(user).replace("linked message", "message")
        message = await references.fetch(client, references.Link(channel, ts, None, ""))
    except SlackApiError as exc:
        return f"(The message could not be read: {slack_error(exc)}.)"
    except SLACK_UNREACHED:
        return "(The message could not be read: Slack could not be reached.)"
    if message is None:
        return "(The message could not be read: Slack has no such message.)"
    return references.reference_text(message, user, bot_user_id)
