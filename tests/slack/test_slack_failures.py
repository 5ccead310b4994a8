"""Slack's failures, named once (assistant/slack/connection.py): which exceptions mean a call
to Slack failed, and how long a 429 asks to wait."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.fakes import FakeSlack, ids
from assistant.slack.connection import SLACK_FAILURES, SLACK_UNREACHED, may_pass, retry_after
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
