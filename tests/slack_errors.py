"""Slack's refusals as AsyncWebClient raises them, for tests of what the app makes of an
answer no fake sends (headers of any shape, or none)."""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_slack_response import AsyncSlackResponse


def slack_error(
    status: int, error: str, headers: Any = None, method: str = "chat.postMessage"
) -> SlackApiError:
    response = AsyncSlackResponse(
        client=None,
        http_verb="POST",
        api_url=f"https://slack.com/api/{method}",
        req_args={},
        data={"ok": False, "error": error},
        headers=headers,
        status_code=status,
    )
    return SlackApiError(error, response)
