"""The Slack Web API client: rate limits waited out, 5xx and dropped connections retried,
all within a bound (SPEC §7)."""

from __future__ import annotations

from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from assistant.settings import Settings

MAX_RETRIES = 3
TIMEOUT_SECONDS = 30


def create_slack_client(settings: Settings) -> AsyncWebClient:
    assert settings.slack_bot_token is not None
    return AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=settings.slack_api_base,
        timeout=TIMEOUT_SECONDS,
        retry_handlers=[
            AsyncRateLimitErrorRetryHandler(max_retry_count=MAX_RETRIES),
            AsyncServerErrorRetryHandler(max_retry_count=MAX_RETRIES),
            AsyncConnectionErrorRetryHandler(max_retry_count=MAX_RETRIES),
        ],
    )
