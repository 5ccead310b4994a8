"""What `assistant run` says while it cannot reach Slack: one line per attempt.

slack-sdk's Socket Mode client (`slack_sdk.socket_mode.aiohttp.SocketModeClient.connect`)
retries a failed connection forever, logging each failure with `logger.exception`: a
traceback of some 40 lines every few seconds, preceded by a "Failed to retrieve WSS URL" error
when the Web API call failed. Given this logger, those records become one line each that says
where, why, and when the next attempt is."""

from __future__ import annotations

import logging
import math
import re

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.web.async_client import AsyncWebClient

from context.urls import shown_url

# The messages of slack-sdk's records that this rewrites (tests/processes/test_socket_mode.py
# checks that slack-sdk still logs them, by the output of a real run against an unreachable
# Slack).
CONNECT_FAILED = "Failed to connect (error:"
URL_FAILED = "Failed to retrieve WSS URL:"
# How a run that Slack failed says so in its `Error:` entry (docs/log-format.md).
SLACK_FAILED = "Slack failed: "
# A Web API call that never had Slack's answer: not reached, the connection dropped, or no
# answer in time. Nothing is known of what Slack did.
SLACK_UNREACHED = (aiohttp.ClientError, TimeoutError)
# Every way a call to Slack fails: Slack answered no (`SlackApiError`), or no answer came.
SLACK_FAILURES = (SlackApiError, *SLACK_UNREACHED)
# Slack's errors that say "not now" rather than "no" (docs.slack.dev, each method's errors).
PASSING_ERRORS = frozenset(
    {"fatal_error", "internal_error", "service_unavailable", "request_timeout", "ratelimited"}
)
_FAILED = re.compile(
    re.escape(SLACK_FAILED)
    + r"(?:(?P<code>\w+) \(from [\w.]+\)|Slack could not be reached \((?P<type>\w+)\))"
)


class ConnectionLog(logging.Filter):
    """A filter on the logger given to the Socket Mode client (`logger`)."""

    def __init__(self, web_client: AsyncWebClient) -> None:
        super().__init__()
        self._web_client = web_client
        self._socket: SocketModeClient | None = None
        self.logger = logging.getLogger("assistant.slack.connection")
        self.logger.addFilter(self)

    def watch(self, socket_client: SocketModeClient) -> None:
        """The client whose retries these are (made with `self.logger`)."""
        self._socket = socket_client

    def close(self) -> None:
        self.logger.removeFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        if message.startswith(URL_FAILED):
            return False  # the connect failure that follows says it
        if not message.startswith(CONNECT_FAILED) or not record.exc_info:
            return True
        error = record.exc_info[1]
        wait = self._socket.ping_interval if self._socket is not None else None
        record.msg = "assistant run: cannot reach Slack at %s (%s), retrying in %s s"
        record.args = (self._where(), failure_reason(error), f"{wait:g}" if wait else "a few")
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info, record.exc_text = None, None
        return True

    def _where(self) -> str:
        wss = self._socket.wss_uri if self._socket is not None else None
        if not wss:
            return shown_url(self._web_client.base_url)  # asking for a websocket URL failed
        return shown_url(wss)  # its query is a one-time ticket: not for logs


def slack_error(exc: SlackApiError) -> str:
    """Slack's `error` of a refused call, or `HTTP <status>` when the answer was no JSON
    object (a proxy's page, something else answering on Slack's address): slack-sdk's
    `data` is then the body's text, which has no `error` to read."""
    data = exc.response.data
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, str) else f"HTTP {exc.response.status_code}"


def failure_reason(error: BaseException | None) -> str:
    """Why a call to Slack failed, in a few words (never a URL: a websocket's holds a ticket)."""
    if isinstance(error, SlackApiError):
        return f"Slack answered {slack_error(error)}"
    if isinstance(error, aiohttp.ClientResponseError):
        return f"HTTP {error.status}"  # not str(): it shows the URL with its ticket
    if isinstance(error, aiohttp.ClientConnectorError):
        return error.os_error.strerror or type(error).__name__
    return type(error).__name__


def slack_reason(exc: BaseException) -> str:
    """Why a Web API call failed, for the log: Slack's error and the method, or that Slack
    could not be reached."""
    if isinstance(exc, SlackApiError):
        return f"{slack_error(exc)} (from {_method(exc)})"
    return f"Slack could not be reached ({type(exc).__name__})"


def _method(exc: SlackApiError) -> str:
    url = getattr(exc.response, "api_url", "") or ""
    return url.rstrip("/").rsplit("/", 1)[-1] or "Slack"


def slack_error_type(failure: str) -> str | None:
    """What failed a run, from its failure (`SLACK_FAILED` and a `slack_reason`): Slack's error
    code (`channel_not_found`), or the exception's type when Slack could not be reached; None
    when Slack did not fail it."""
    found = _FAILED.match(failure)
    return (found["code"] or found["type"]) if found else None


def may_pass(exc: BaseException) -> bool:
    """Whether Slack failing with `exc` may be over if asked again later: HTTP 5xx, a 429,
    one of `PASSING_ERRORS`, or Slack not reached at all."""
    if isinstance(exc, SlackApiError):
        status = exc.response.status_code
        return status >= 500 or status == 429 or slack_error(exc) in PASSING_ERRORS
    return isinstance(exc, SLACK_UNREACHED)


def retry_after(exc: BaseException, otherwise: float) -> float:
    """How long Slack's answer asked to wait before the next call (its `Retry-After`, whole
    seconds on a 429), or `otherwise` when it did not say, or said something that is not a
    finite, non-negative number of seconds."""
    if not isinstance(exc, SlackApiError):
        return otherwise
    # aiohttp's headers (AsyncWebClient) ignore case, the sync WebClient's are a plain dict;
    # slack-sdk's retry handlers see each value as a list.
    headers = {str(name).lower(): value for name, value in (exc.response.headers or {}).items()}
    value = headers.get("retry-after")
    if isinstance(value, list):
        value = value[0] if value else None
    try:
        seconds = float(value) if value is not None else otherwise
    except (TypeError, ValueError):
        return otherwise
    return seconds if math.isfinite(seconds) and seconds >= 0 else otherwise
