"""The gate in front of Bolt: a request to the events endpoint reaches Bolt only once it is
known to come from Slack.

Bolt reads a whole body into memory and parses it before it checks the signature, so anyone
who can reach the port could make the app buffer and parse bodies of any size (or wait for a
body that never ends) while Slack's events queue behind them. Here the cheap checks come
first, on the headers, then the body is read within a size and a time limit, and the
signature is checked on its raw bytes: a request that fails costs a few microseconds, is
answered with its status and `Connection: close`, and leaves one log line (no traceback, no
body content).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, cast

from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.payload_utils import (
    to_action,
    to_command,
    to_event,
    to_message,
    to_options,
    to_shortcut,
    to_step,
    to_view,
)
from slack_sdk.signature import SignatureVerifier

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY_BYTES = 1024 * 1024  # Slack's events are a few KB; its largest payloads far below this
BODY_TIMEOUT_S = 5.0  # Slack sends a request at once, and gives up on the answer after 3 s
MAX_AGE_S = 5 * 60  # Slack's window: an older timestamp is a replay (SignatureVerifier's too)

log = logging.getLogger(__name__)


class Rejected(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class SlackRequestGuard:
    """ASGI middleware: POSTs to `path` must be signed by Slack, at most `max_body` bytes,
    and arrive within `body_timeout` seconds; everything else passes through untouched."""

    def __init__(
        self,
        app: ASGIApp,
        signing_secret: str,
        path: str = "/slack/events",
        *,
        max_body: int = MAX_BODY_BYTES,
        body_timeout: float = BODY_TIMEOUT_S,
    ) -> None:
        self.app = app
        self.path = path
        self.max_body = max_body
        self.body_timeout = body_timeout
        self._verifier = SignatureVerifier(signing_secret)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self.path or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        try:
            body = await self._verified_body(scope, receive)
        except Rejected as rejected:
            await _reject(scope, send, rejected)
            return
        if body is None:
            return  # the client left before its body was read: nobody to answer
        await self.app(scope, _replay(body, receive), send)

    async def _verified_body(self, scope: Scope, receive: Receive) -> bytes | None:
        headers = _headers(scope)
        length = headers.get("content-length")
        if length is not None and not length.isdigit():  # h11 refuses it before; others may not
            raise Rejected(400, "Content-Length is not a number")
        if length is not None and int(length) > self.max_body:
            raise Rejected(413, f"body of {int(length)} bytes, over {self.max_body}")
        signature = headers.get("x-slack-signature")
        timestamp = headers.get("x-slack-request-timestamp")
        if not signature or not timestamp:
            raise Rejected(401, "not signed (no X-Slack-Signature or X-Slack-Request-Timestamp)")
        if not signature.isascii():  # hmac.compare_digest raises TypeError on such a str
            raise Rejected(401, "bad signature")
        # Seconds since 1970 have 10 digits until 2286; int() of thousands raises ValueError.
        if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
            raise Rejected(400, "X-Slack-Request-Timestamp is not a number of seconds")
        if abs(time.time() - int(timestamp)) > MAX_AGE_S:
            raise Rejected(401, "timestamp outside Slack's 5-minute window (a replay?)")
        body = await self._read_body(receive)
        if body is None:
            return None
        try:
            valid = self._verifier.is_valid(body, timestamp, signature)
        except UnicodeDecodeError:
            raise Rejected(400, "body is not UTF-8") from None
        if not valid:
            raise Rejected(401, "bad signature")
        # Only Slack (or whoever holds the signing secret) gets here: Bolt would answer a body
        # it cannot read with a 500 and a traceback, so it is refused as Bolt would read it.
        unreadable = bolt_cannot_read(body.decode(), headers)
        if unreadable:
            raise Rejected(400, f"signed, but {unreadable}")
        return body

    async def _read_body(self, receive: Receive) -> bytes | None:
        """The whole body, or None if the client disconnected; `Rejected` when it is too large
        (counted as it arrives, so a chunked body is cut off at the limit) or too slow."""
        body = bytearray()
        try:
            async with asyncio.timeout(self.body_timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    body += message.get("body", b"")
                    if len(body) > self.max_body:
                        raise Rejected(413, f"body over {self.max_body} bytes")
                    if not message.get("more_body", False):
                        return bytes(body)
        except TimeoutError:
            raise Rejected(
                408, f"body not received within {self.body_timeout:g} s ({len(body)} bytes came)"
            ) from None


# What Bolt takes out of every request before any listener runs (the payload views it offers
# each listener and matcher): a part it cannot take raises there, and the request gets a 500.
_PAYLOAD_VIEWS: tuple[tuple[str, Callable[[dict[str, Any]], Any]], ...] = (
    ("options", to_options),
    ("shortcut", to_shortcut),
    ("actions", to_action),
    ("view", to_view),
    ("command", to_command),
    ("event", to_event),
    ("message", to_message),
    ("step", to_step),
)


def bolt_cannot_read(body: str, headers: dict[str, str]) -> str | None:
    """None when Bolt can read the payload (parse it, take its ids and its parts), else which
    part it cannot, in a few words (never the payload's content)."""
    try:
        # Bolt's own request: its parsing and its ids (team, enterprise, user, channel).
        # Bolt only reads the headers (into a dict of its own): its `dict` of `str | Sequence[str]`
        # should be a Mapping, which a dict[str, str] is.
        request = AsyncBoltRequest(body=body, headers=cast(dict[str, str | Sequence[str]], headers))
    except (ValueError, RecursionError):  # not JSON, or nested past Python's recursion limit
        return "not a payload Bolt can read"
    except Exception as exc:  # whatever Bolt raises here, it would raise serving it
        return f"Bolt cannot read its ids ({type(exc).__name__})"
    if not isinstance(request.body, dict):
        return "not a payload Bolt can read"
    for name, view in _PAYLOAD_VIEWS:
        try:
            part = view(request.body)
        except Exception as exc:  # as above: Bolt would raise the same, routing it
            return f"Bolt cannot read its {name} ({type(exc).__name__})"
        if part is not None and not isinstance(part, dict):
            return f"Bolt cannot read its {name} (not an object)"
    return None


def _headers(scope: Scope) -> dict[str, str]:
    # Latin-1 is what HTTP header bytes are; a later duplicate wins, as in Starlette.
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives the body already read, then waits on the real one (for a
    disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _reject(scope: Scope, send: Send, rejected: Rejected) -> None:
    client = scope.get("client")
    where = f"{client[0]}:{client[1]}" if client else "unknown client"
    log.warning(
        "refused %s %s from %s: %d %s",
        scope["method"],
        scope["path"],
        where,
        rejected.status,
        rejected.reason,
    )
    body = f"{rejected.reason}\n".encode()
    await send(
        {
            "type": "http.response.start",
            "status": rejected.status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                # The rest of the request is never read: the connection cannot carry another.
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
