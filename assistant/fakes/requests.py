"""Events API deliveries as Slack makes them: `event_callback` wraps an inner event (see
`assistant.fakes.events.builders`) in the outer payload, `url_verification` is the endpoint check,
and `signed_event_request` turns a payload into the exact bytes and headers Slack POSTs to an
HTTP endpoint, signed (`sign`) as Slack signs them.
"""

from __future__ import annotations

import json
import time
from typing import Any, cast

from slack_sdk.signature import SignatureVerifier

from assistant.fakes import ids


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
    # Optional in slack-sdk's signature only for a None timestamp or body, which it does not take.
    signature = cast(
        str,
        SignatureVerifier(signing_secret).generate_signature(timestamp=str(timestamp), body=body),
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
