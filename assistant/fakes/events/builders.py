"""Builders for Slack Events API inner events, as plain dicts in Slack's shapes: `app_mention`,
`message`, `dm`, edits, deletions, bot posts, joins.

`assistant.fakes.requests` wraps one in the outer `event_callback` payload and signs it
into the exact bytes and headers Slack POSTs to an HTTP endpoint; the same payloads go over Socket
Mode via `FakeSlack.send_event` / `send_envelope`.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from assistant.fakes import ids

_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")


def rich_text_blocks(text: str) -> list[dict[str, Any]]:
    """The `rich_text` block Slack attaches to a typed message (user mentions split out)."""
    elements: list[dict[str, Any]] = []
    pos = 0
    for match in _MENTION.finditer(text):
        if match.start() > pos:
            elements.append({"type": "text", "text": text[pos : match.start()]})
        elements.append({"type": "user", "user_id": match.group(1)})
        pos = match.end()
    if pos < len(text):
        elements.append({"type": "text", "text": text[pos:]})
    section = {"type": "rich_text_section", "elements": elements}
    return [{"type": "rich_text", "block_id": uuid.uuid4().hex[:5], "elements": [section]}]


def _user_message(
    type: str,
    *,
    text: str,
    user: str,
    channel: str,
    ts: str | None,
    thread_ts: str | None,
    parent_user_id: str | None,
    files: list[dict[str, Any]] | None,
    extra: dict[str, Any],
) -> dict[str, Any]:
    ts = ts or ids.next_ts()
    event: dict[str, Any] = {
        "user": user,
        "type": type,
        "ts": ts,
        "client_msg_id": str(uuid.uuid4()),
        "text": text,
        "team": ids.TEAM_ID,
        "blocks": rich_text_blocks(text),
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
        if parent_user_id is not None:
            event["parent_user_id"] = parent_user_id
    if files is not None:
        event.update(files=files, upload=False, display_as_bot=False)
    event.update(extra)
    return event


def app_mention(
    text: str,
    *,
    user: str = ids.USER_ID,
    channel: str = ids.CHANNEL_ID,
    ts: str | None = None,
    thread_ts: str | None = None,
    parent_user_id: str | None = None,
    files: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An `app_mention` event. Like Slack's, it has no `channel_type`; the same message also
    arrives as a `message` event (build it with `message(..., ts=<same ts>)`)."""
    return _user_message(
        "app_mention",
        text=text,
        user=user,
        channel=channel,
        ts=ts,
        thread_ts=thread_ts,
        parent_user_id=parent_user_id,
        files=files,
        extra=extra,
    )


def message(
    text: str,
    *,
    user: str = ids.USER_ID,
    channel: str = ids.CHANNEL_ID,
    channel_type: str = "channel",
    ts: str | None = None,
    thread_ts: str | None = None,
    parent_user_id: str | None = None,
    files: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A human's `message` event. `channel_type`: channel, group, im or mpim (a DM is `im`
    with a `D…` channel). With files it gets the `file_share` subtype, as in Slack."""
    event = _user_message(
        "message",
        text=text,
        user=user,
        channel=channel,
        ts=ts,
        thread_ts=thread_ts,
        parent_user_id=parent_user_id,
        files=files,
        extra=extra,
    )
    if files is not None:
        event.setdefault("subtype", "file_share")
    event["channel_type"] = channel_type
    return event


def dm(
    text: str, *, user: str = ids.USER_ID, channel: str = ids.DM_CHANNEL_ID, **kw: Any
) -> dict[str, Any]:
    """A direct message to the bot (`message` event with `channel_type` im)."""
    return message(text, user=user, channel=channel, channel_type="im", **kw)


def bot_message(
    text: str,
    *,
    channel: str = ids.CHANNEL_ID,
    bot_id: str = ids.BOT_ID,
    user: str | None = ids.BOT_USER_ID,
    app_id: str = ids.APP_ID,
    ts: str | None = None,
    thread_ts: str | None = None,
    channel_type: str = "channel",
    legacy: bool = False,
) -> dict[str, Any]:
    """A message posted by an app. Defaults are this bot's own post echoed back by Slack.

    Apps posting with a bot token produce a plain `message` with `bot_id`, `app_id` and the
    bot user in `user`; `legacy=True` gives the old `bot_message` subtype (webhooks,
    integrations) with a `username` and no `user`.
    """
    ts = ts or ids.next_ts()
    event: dict[str, Any] = {"type": "message", "text": text, "ts": ts, "bot_id": bot_id}
    if legacy:
        event.update(subtype="bot_message", username="some-integration")
    else:
        event.update(
            user=user,
            app_id=app_id,
            team=ids.TEAM_ID,
            bot_profile={"id": bot_id, "app_id": app_id, "name": "bot", "team_id": ids.TEAM_ID},
            blocks=rich_text_blocks(text),
        )
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    event.update(channel=channel, event_ts=ts, channel_type=channel_type)
    return event


def message_changed(
    *,
    ts: str,
    text: str,
    previous_text: str,
    user: str = ids.USER_ID,
    channel: str = ids.CHANNEL_ID,
    channel_type: str = "channel",
    thread_ts: str | None = None,
    edit_ts: str | None = None,
) -> dict[str, Any]:
    """An edit of message `ts` (the event itself gets a new ts, like Slack's)."""
    edit_ts = edit_ts or ids.next_ts()
    base: dict[str, Any] = {"type": "message", "user": user, "team": ids.TEAM_ID, "ts": ts}
    if thread_ts is not None:
        base["thread_ts"] = thread_ts
    return {
        "type": "message",
        "subtype": "message_changed",
        "message": {
            **base,
            "text": text,
            "blocks": rich_text_blocks(text),
            "edited": {"user": user, "ts": edit_ts},
        },
        "previous_message": {
            **base,
            "text": previous_text,
            "blocks": rich_text_blocks(previous_text),
        },
        "channel": channel,
        "hidden": True,
        "ts": edit_ts,
        "event_ts": edit_ts,
        "channel_type": channel_type,
    }


def message_deleted(
    *,
    deleted_ts: str,
    previous_text: str,
    user: str = ids.USER_ID,
    channel: str = ids.CHANNEL_ID,
    channel_type: str = "channel",
    thread_ts: str | None = None,
    event_ts: str | None = None,
) -> dict[str, Any]:
    """The deletion of message `deleted_ts`."""
    event_ts = event_ts or ids.next_ts()
    previous: dict[str, Any] = {
        "type": "message",
        "user": user,
        "text": previous_text,
        "team": ids.TEAM_ID,
        "ts": deleted_ts,
    }
    if thread_ts is not None:
        previous["thread_ts"] = thread_ts
    return {
        "type": "message",
        "subtype": "message_deleted",
        "previous_message": previous,
        "channel": channel,
        "hidden": True,
        "deleted_ts": deleted_ts,
        "event_ts": event_ts,
        "ts": event_ts,
        "channel_type": channel_type,
    }


def member_joined_channel(
    *, user: str, channel: str = ids.CHANNEL_ID, inviter: str | None = None
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "member_joined_channel",
        "user": user,
        "channel": channel,
        "channel_type": "C",
        "team": ids.TEAM_ID,
        "event_ts": ids.next_ts(),
    }
    if inviter is not None:
        event["inviter"] = inviter
    return event
