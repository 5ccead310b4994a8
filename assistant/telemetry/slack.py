"""Slack's side of the telemetry: the acknowledged requests (a Bolt middleware: with
`process_before_response` the listener has returned when it does, so the request is answered)
and the Web API's HTTP 429 answers (a retry handler that counts and never retries itself; the
client's own handlers decide)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

from assistant.telemetry.runs import Telemetry


class RateLimitCounter(AsyncRetryHandler):
    def __init__(self, telemetry: Telemetry) -> None:
        super().__init__(max_retry_count=0)
        self._counter = telemetry.metrics.rate_limited

    async def can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is not None and response.status_code == 429:
            method = request.url.rsplit("/", 1)[-1]
            self._counter.add(1, {"slack.method": method})
        return False


def count_rate_limits(client: AsyncWebClient, telemetry: Telemetry) -> None:
    """Count the 429s `client` gets (first among its retry handlers: each is asked in turn)."""
    client.retry_handlers = [RateLimitCounter(telemetry), *client.retry_handlers]


def acknowledged(telemetry: Telemetry) -> Callable[..., Awaitable[Any]]:
    """A Bolt middleware counting each request once its listeners have run."""
    counter = telemetry.metrics.events

    async def middleware(body: dict[str, Any], next: Callable[[], Awaitable[Any]]) -> Any:
        response = await next()
        kind = (body.get("event") or {}).get("type") or body.get("type") or "unknown"
        counter.add(1, {"slack.event.type": str(kind)})
        return response

    return middleware
