"""A run's `error.type` where Slack failed it: Slack's error code, as the conventions ask
("the error code"), read from the failure its `Error:` entry records (docs/log-format.md)."""

from __future__ import annotations

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError

from assistant.slack.connection import SLACK_FAILED, slack_error_type, slack_reason
from tests.slack_errors import slack_error


def refused(error: str, method: str) -> SlackApiError:
    return slack_error(200, error, {}, method)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (refused("channel_not_found", "chat.postMessage"), "channel_not_found"),
        (refused("fatal_error", "chat.update"), "fatal_error"),
        (aiohttp.ServerDisconnectedError(), "ServerDisconnectedError"),
    ],
)
def test_a_failure_slack_caused_has_its_error_code(exc, expected):
    failure = f'{SLACK_FAILED}{slack_reason(exc)}. The user was told: "Sorry (from x.y)"'
    assert slack_error_type(failure) == expected
    assert slack_error_type(f"{SLACK_FAILED}{slack_reason(exc)}, still after 15 min") == expected


def test_other_failures_have_none():
    assert slack_error_type("the model call failed: 500 (from the model)") is None
    assert slack_error_type("the run failed unexpectedly (KeyError)") is None
