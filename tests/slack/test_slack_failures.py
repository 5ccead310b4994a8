"""Slack's failures, named once (assistant/slack/connection.py): which exceptions mean a call
to Slack failed, and how long a 429 asks to wait."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from aiohttp import web
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.fakes import FakeSlack, ids
from assistant.slack.connection import (
    SLACK_FAILURES,
    SLACK_UNREACHED,
    failure_reason,
    may_pass,
    retry_after,
    slack_reason,
)
from tests.slack_errors import slack_error


def rate_limited(headers: Any) -> SlackApiError:
    return slack_error(429, "ratelimited", headers)


@pytest.mark.asyncio
async def test_retry_after_is_read_from_both_clients_answers(slack: FakeSlack) -> None:
    slack.rate_limit("chat.postMessage", retry_after=30, times=2)
    with pytest.raises(SlackApiError) as sync_error:
        WebClient(token=ids.BOT_TOKEN, base_url=slack.api_url).chat_postMessage(
            channel=ids.CHANNEL_ID, text="hi"
        )
    with pytest.raises(SlackApiError) as async_error:
        await AsyncWebClient(token=ids.BOT_TOKEN, base_url=slack.api_url).chat_postMessage(
            channel=ids.CHANNEL_ID, text="hi"
        )
    assert retry_after(sync_error.value, 1.0) == 30.0
    assert retry_after(async_error.value, 1.0) == 30.0
    assert may_pass(async_error.value)


@pytest.mark.parametrize(
    "headers",
    [
        {"retry-after": "30"},  # the header's name in any case (HTTP/2 proxies lower it)
        {"RETRY-AFTER": "30"},
        {"Retry-After": ["30"]},  # a value as slack-sdk's retry handlers hold it
    ],
)
def test_retry_after_in_any_spelling(headers: dict[str, Any]) -> None:
    assert retry_after(rate_limited(headers), 1.0) == 30.0


@pytest.mark.parametrize(
    "headers",
    [
        None,
        {},
        {"Retry-After": ""},
        {"Retry-After": []},
        {"Retry-After": "soon"},
        {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"},  # a date: Slack sends seconds
        {"Retry-After": "inf"},  # would hold a stop forever
        {"Retry-After": "nan"},
        {"Retry-After": "-5"},
    ],
)
def test_a_missing_or_garbled_retry_after_is_the_callers_default(headers: Any) -> None:
    assert retry_after(rate_limited(headers), 1.0) == 1.0
    assert retry_after(rate_limited(headers), 0.0) == 0.0


def test_only_slacks_answers_say_how_long_to_wait() -> None:
    assert retry_after(TimeoutError(), 1.0) == 1.0
    assert retry_after(aiohttp.ClientConnectionError(), 0.0) == 0.0


@pytest.mark.parametrize("exc", [rate_limited({}), aiohttp.ClientConnectionError(), TimeoutError()])
def test_the_failures_are_slacks_no_and_no_answer(exc: BaseException) -> None:
    assert isinstance(exc, SLACK_FAILURES)
    assert isinstance(exc, SLACK_UNREACHED) is not isinstance(exc, SlackApiError)
    assert not isinstance(ValueError(), SLACK_FAILURES)


@pytest.mark.asyncio
async def test_an_answer_that_is_no_json_is_named_by_its_status_not_a_crash() -> None:
    """Something else answering on Slack's address (a proxy's page, a port another program
    took): slack-sdk's `data` is then the body's text, which has no `error` to read."""

    async def page(request: web.Request) -> web.Response:
        return web.Response(status=404, text="<html>Not Found</html>", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", page)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        client = AsyncWebClient(token=ids.BOT_TOKEN, base_url=f"http://127.0.0.1:{port}/api/")
        with pytest.raises(SlackApiError) as refused:
            await client.auth_test()
    finally:
        await runner.cleanup()
    assert slack_reason(refused.value) == "HTTP 404 (from auth.test)"
    assert failure_reason(refused.value) == "Slack answered HTTP 404"
    assert not may_pass(refused.value)
