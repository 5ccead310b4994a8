"""What strangers send to the app's HTTP port: raw socket clients for the requests no HTTP
library sends (bodies of tens of megabytes, heads cut in half, bodies that never end,
garbage), for the tests and `python -m bench flood`.

None of them knows the signing secret. Each sends, then reads until the server answers or
closes, and says what happened (`Outcome`); the caller decides what should have.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TypedDict

CHUNK = 64 * 1024
_FILLER = b"x" * CHUNK


@dataclass(frozen=True)
class Outcome:
    status: int | None  # the response's status code, None when no response came
    closed: bool  # the server closed the connection (after its response, if any)
    sent: int  # bytes the sender got out before it stopped or was cut off


def head(
    path: str = "/slack/events",
    *,
    length: int | None = None,
    chunked: bool = False,
    forged: bool = False,
    timestamp: str | None = None,
    extra: dict[str, str] | None = None,
) -> bytes:
    """A POST's request line and headers. `forged`: Slack's signing headers with a fresh
    timestamp and a signature made up (what a stranger who read Slack's docs would send)."""
    headers = {"Host": "127.0.0.1", "Content-Type": "application/json"}
    if length is not None:
        headers["Content-Length"] = str(length)
    if chunked:
        headers["Transfer-Encoding"] = "chunked"
    if forged or timestamp is not None:
        headers["X-Slack-Request-Timestamp"] = timestamp or str(int(time.time()))
        headers["X-Slack-Signature"] = "v0=" + "0" * 64
    headers.update(extra or {})
    lines = [f"POST {path} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    return "\r\n".join(lines).encode("latin-1")


def filler(size: int, chunked: bool = False) -> Iterator[bytes]:
    """`size` bytes of body in 64 KiB pieces (framed as chunks when `chunked`), made as sent:
    the sender never holds the body it claims to send."""
    left = size
    while left > 0:
        piece = _FILLER[: min(CHUNK, left)]
        left -= len(piece)
        yield (b"%x\r\n" % len(piece) + piece + b"\r\n") if chunked else piece


def exchange(port: int, data: Iterable[bytes], timeout: float) -> Outcome:
    """Send each piece of `data` (stopping when the server cuts the connection), then read
    until the server closes the connection or `timeout` seconds pass without it."""
    sent = 0
    received = bytearray()
    closed = False
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            for piece in data:
                sock.sendall(piece)
                sent += len(piece)
        except OSError:
            pass  # cut off: what matters is what came back
        sock.settimeout(timeout)
        try:
            while chunk := sock.recv(CHUNK):
                received += chunk
            closed = True
        except TimeoutError:
            closed = False
        except OSError:
            closed = True  # reset: closed without reading the rest
    return Outcome(_status(bytes(received)), closed, sent)


def _status(response: bytes) -> int | None:
    line = response.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) > 1 and line[0].startswith(b"HTTP/") else None


# --- the attacks ------------------------------------------------------------------------


def oversized(port: int, size: int, *, chunked: bool, forged: bool, timeout: float) -> Outcome:
    """A body of `size` bytes, its length declared (Content-Length) or not (chunked)."""
    first = head(length=None if chunked else size, chunked=chunked, forged=forged)
    return exchange(port, [first, *filler(size, chunked)], timeout)


def half_request_line(port: int, timeout: float) -> Outcome:
    return exchange(port, [b"POST /slack/ev"], timeout)


def half_headers(port: int, timeout: float) -> Outcome:
    cut = b"POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le"
    return exchange(port, [cut], timeout)


def silent(port: int, timeout: float) -> Outcome:
    """A connection that sends nothing at all."""
    return exchange(port, [], timeout)


def slow_body(port: int, timeout: float) -> Outcome:
    """Headers that announce 1,000 bytes, then 10 of them, then nothing."""
    return exchange(port, [head(length=1000, forged=True), b"{" * 10], timeout)


# Bodies and heads that are not Slack's: each with what a correct app answers.
MALFORMED: dict[str, tuple[bytes, int]] = {
    "unsigned JSON": (b'{"type": "event_callback", "event": {"type": "app_mention"}}', 401),
    "unsigned garbage": (b"{{{{ not json \xff\xfe", 401),
    "forged signature": (b'{"type": "event_callback"}', 401),
    "forged signature, not ASCII": (b'{"type": "event_callback"}', 401),
    "timestamp not a number": (b"{}", 400),
    "timestamp of 5,000 digits": (b"{}", 400),
    "timestamp an hour old": (b"{}", 401),
    "forged, not UTF-8": (b"\xff\xfe\xfd garbage", 400),
}


class _HeadOptions(TypedDict, total=False):
    """What `malformed` changes in `head`'s request."""

    forged: bool
    timestamp: str
    extra: dict[str, str]


def malformed(port: int, kind: str, timeout: float) -> Outcome:
    body, _ = MALFORMED[kind]
    options: _HeadOptions = {}
    if kind.startswith("forged"):
        options["forged"] = True
    if kind == "forged signature, not ASCII":
        options["extra"] = {"X-Slack-Signature": "v0=" + "é" * 64}
    elif kind == "timestamp not a number":
        options["timestamp"] = "soon"
    elif kind == "timestamp of 5,000 digits":
        options["timestamp"] = "9" * 5000
    elif kind == "timestamp an hour old":
        options["timestamp"] = str(int(time.time()) - 3600)
    return exchange(port, [head(length=len(body), **options) + body], timeout)
