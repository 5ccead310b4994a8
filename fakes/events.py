"""Builders for Slack Events API payloads, and signing them the way Slack does.

Inner events (`app_mention`, `message`, edits, deletions, bot posts, joins) are plain dicts in
Slack's shapes; `event_callback` wraps one in the outer envelope; `signed_event_request` turns
that into the exact bytes and headers Slack POSTs to an HTTP endpoint. The same payloads go
over Socket Mode via `FakeSlack.send_event` / `send_envelope`.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any

from slack_sdk.signature import SignatureVerifier

from fakes import ids

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


def event_callback(
    event: dict[str, Any],
    *,
    team_id: str = ids.TEAM_ID,
    api_app_id: str = ids.APP_ID,
    bot_user_id: str = ids.BOT_USER_ID,
    event_id: str | None = None,
    event_time: int | None = None,
) -> dict[str, Any]:
    """The outer Events API payload around an inner event.

    Reuse the returned dict (same `event_id`) to simulate Slack's retries of one delivery.
    """
    if event_time is None:
        event_time = int(float(event.get("event_ts") or event.get("ts") or time.time()))
    channel = event.get("channel", "")
    return {
        "token": "fake-verification-token",
        "team_id": team_id,
        "context_team_id": team_id,
        "context_enterprise_id": None,
        "api_app_id": api_app_id,
        "event": event,
        "type": "event_callback",
        "event_id": event_id or ids.next_event_id(),
        "event_time": event_time,
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": team_id,
                "user_id": bot_user_id,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
        "event_context": f"4-fake-{team_id}-{channel}",
    }


def url_verification(challenge: str = "fake-challenge") -> dict[str, Any]:
    return {"token": "fake-verification-token", "challenge": challenge, "type": "url_verification"}


def sign(
    body: bytes, signing_secret: str = ids.SIGNING_SECRET, timestamp: int | None = None
) -> dict[str, str]:
    """Slack's request-signing headers: `v0=` HMAC-SHA256 of `v0:{timestamp}:{body}`."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    signature = SignatureVerifier(signing_secret).generate_signature(
        timestamp=str(timestamp), body=body
    )
    return {"X-Slack-Request-Timestamp": str(timestamp), "X-Slack-Signature": signature}


def signed_event_request(
    event_or_payload: dict[str, Any],
    *,
    signing_secret: str = ids.SIGNING_SECRET,
    timestamp: int | None = None,
    retry_num: int | None = None,
    retry_reason: str = "http_timeout",
) -> tuple[bytes, dict[str, str]]:
    """Body bytes and headers for POSTing an event to the app's HTTP endpoint.

    Accepts an inner event (wrapped with `event_callback`) or a complete payload (its `type`
    is `event_callback` or `url_verification`). `timestamp` defaults to now: Bolt rejects
    requests more than five minutes off. `retry_num` adds Slack's retry headers.
    """
    payload = event_or_payload
    if payload.get("type") not in ("event_callback", "url_verification", "app_rate_limited"):
        payload = event_callback(payload)
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = {"Content-Type": "application/json", **sign(body, signing_secret, timestamp)}
    if retry_num is not None:
        headers["X-Slack-Retry-Num"] = str(retry_num)
        headers["X-Slack-Retry-Reason"] = retry_reason
    return body, headers
