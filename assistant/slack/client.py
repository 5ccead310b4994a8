"""The Slack Web API client: rate limits waited out, 5xx and dropped connections retried,
all within a bound (docs/architecture.md#slack-and-the-model)."""

from __future__ import annotations

import aiohttp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

MAX_RETRIES = 3
TIMEOUT_SECONDS = 30


def create_slack_client(token: str, api_base: str) -> AsyncWebClient:
    """Call inside the event loop that will use it; `close_slack_client` at the end."""
    return configure_slack_client(AsyncWebClient(token=token), api_base)


def configure_slack_client(client: AsyncWebClient, api_base: str) -> AsyncWebClient:
    """Point `client` (made with the bot token, e.g. by Bolt) at `api_base` (SLACK_API_URL),
    with the timeout, the retries and a session of its own. slack-sdk reads these on every
    call."""
    client.base_url = api_base
    client.timeout = TIMEOUT_SECONDS
    # One session for every call, so connections are kept and reused: without it slack-sdk
    # opens a session (and a TCP and TLS connection) per API call.
    client.session = aiohttp.ClientSession()
    client.retry_handlers = [
        AsyncRateLimitErrorRetryHandler(max_retry_count=MAX_RETRIES),
        AsyncServerErrorRetryHandler(max_retry_count=MAX_RETRIES),
        AsyncConnectionErrorRetryHandler(max_retry_count=MAX_RETRIES),
    ]
    return client


async def close_slack_client(client: AsyncWebClient) -> None:
    if client.session is not None:
        await client.session.close()
