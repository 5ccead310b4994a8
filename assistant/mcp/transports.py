"""The ways to one MCP server, on the SDK's: each bounded in what it reads of one message
(ASSISTANT_MAX_MCP_RESULT_BYTES), and watched for the transport closing.

The SDK reads a JSON answer whole (`response.aread()`) and a stdio line whole, whatever its
size: a server's 1 GB result would take the process, and every channel it serves, down. Here
an HTTP body (an event of an event stream) or a stdio line is read to the bound and no
further: the `Link` of the connection says so (`too_large`), the message is not delivered,
and the connection drops it (`assistant.mcp.connection`).

Whether the transport closed (`Link.closed`) is what tells a server that is lost from one
that answered with an error: the SDK gives both the code -32000, which is also the first of
JSON-RPC's server errors."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TextIO

import anyio
import httpx2
import mcp_types as types
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.client._transport import Transport, TransportStreams
from mcp.client.auth.utils import extract_field_from_www_auth
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared._stream_protocols import ReadStream
from mcp.shared.message import SessionMessage

STOP_SECONDS = 2.0  # a stdio server's time to end once its stdin is closed, then to die
# An event stream's events end at an empty line: two line ends in a row (each CR, LF or
# CRLF). CRLF alone is one; any two in a row hold LF LF, CR CR or LF CR.
_EVENT_END = re.compile(rb"\n\n|\r\r|\n\r")
_SCOPE_TOKEN = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]{1,200}$")  # RFC 6749's scope-token


@dataclass
class Link:
    """One connection's state, as its transport finds it."""

    most: int  # bytes of one message (an HTTP body, an event, a stdio line)
    too_large: bool = False  # a message passed `most`: it was not read
    compressed: str | None = None  # the encoding of an answer compressed though declined
    closed: bool = False  # the transport's read stream ended: the server is gone


class MessageTooLarge(httpx2.StreamError):
    """A body, or an event, longer than the link's bound: the SDK takes it as a body it could
    not read (a StreamError), the connection as the reason to drop the link."""

    def __init__(self, most: int) -> None:
        super().__init__(f"a message larger than {most:,} bytes")


class Compressed(httpx2.StreamError):
    def __init__(self, encoding: str) -> None:
        super().__init__(f"an answer compressed ({encoding[:40]}) though asked for none")


class _Bounded(httpx2.AsyncByteStream):
    """A response's bytes, counted: the whole body, or each event of an event stream (the
    stream of server messages lives as long as the connection)."""

    def __init__(self, inner: httpx2.AsyncByteStream, link: Link, events: bool) -> None:
        self._inner = inner
        self._link = link
        self._events = events

    @property
    def elapsed(self) -> Any:
        return getattr(self._inner, "elapsed", None)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        counted = 0
        last = b""  # an event's end may be split over two chunks
        async for chunk in self._inner:
            if self._events:
                ends = list(_EVENT_END.finditer(last + chunk))
                counted = counted + len(chunk) if not ends else len(last + chunk) - ends[-1].end()
                last = chunk[-1:]
            else:
                counted += len(chunk)
            if counted > self._link.most:
                self._link.too_large = True
                raise MessageTooLarge(self._link.most)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Refused(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, error: Exception) -> None:
        self._inner = inner
        self._error = error

    async def __aiter__(self) -> AsyncIterator[bytes]:
        raise self._error
        yield b""  # an async generator, never reached

    async def aclose(self) -> None:
        await self._inner.aclose()


class PersonAuth(httpx2.Auth):
    """A person's connection to an `auth: user` server: their access token on each request
    (set before each call: refreshed by `assistant.mcp.signin.tokens`), and whether the
    server refused it (HTTP 401: revoked, or expired early), or asked for more scope (HTTP
    403 `insufficient_scope`, RFC 6750 §3.1: the scope it named, for a step-up sign-in)."""

    def __init__(self) -> None:
        self.token = ""
        self.refused = False
        self.wanted: str | None = None  # the scope a 403 `insufficient_scope` asked for

    def __repr__(self) -> str:
        return "PersonAuth(…)"

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        request.headers["Authorization"] = f"Bearer {self.token}"
        response = yield request
        if response.status_code == 401:
            self.refused = True
        elif response.status_code == 403 and (
            extract_field_from_www_auth(response, "error") == "insufficient_scope"
        ):
            scope = extract_field_from_www_auth(response, "scope") or ""
            self.wanted = " ".join(t for t in scope.split() if _SCOPE_TOKEN.match(t))[:2000]


def http_transport(
    url: str,
    headers: dict[str, str],
    link: Link,
    stack: contextlib.AsyncExitStack,
    auth: httpx2.Auth | None = None,
) -> Transport:
    """The SDK's streamable HTTP client, on an httpx client of the SDK's defaults whose
    responses are read within `link.most` bytes. Compression is declined: a small body that
    inflates to gigabytes would pass any bound on what came over the wire."""
    http = create_mcp_http_client(headers={**headers, "Accept-Encoding": "identity"}, auth=auth)
    stack.push_async_callback(http.aclose)

    async def bounded(response: httpx2.Response) -> None:
        assert isinstance(response.stream, httpx2.AsyncByteStream)  # an async client's
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            link.compressed = encoding[:40]
            response.stream = _Refused(response.stream, Compressed(encoding))
            return
        kind = response.headers.get("content-type", "").lower()
        response.stream = _Bounded(response.stream, link, kind.startswith("text/event-stream"))

    http.event_hooks = {"response": [bounded]}
    # The SDK bounds an event's lines itself, to 1 MiB unless told: the same bound as ours.
    return _watched(
        streamable_http_client(url, http_client=http, max_sse_event_size=link.most), link
    )


def stdio_transport(command: Sequence[str], link: Link) -> Transport:
    """The server started by `command`, over its stdin and stdout (newline-delimited JSON-RPC,
    as the SDK's `stdio_client` speaks it), each line read within `link.most` bytes."""
    return _watched(_stdio(command, link), link)


@contextlib.asynccontextmanager
async def _stdio(command: Sequence[str], link: Link) -> AsyncIterator[TransportStreams]:
    # The server's own stderr goes to the process's: the SDK's default is the `sys.stderr` of
    # the moment it was imported, which, imported during a command run with its output
    # captured (no file descriptor), fails every later start. It gets only the SDK's default
    # environment (HOME, PATH, …), never the app's secrets; a process group of its own, so
    # that it and what it started end together.
    errlog: TextIO = sys.__stderr__ or sys.stderr
    process = await anyio.open_process(
        list(command), env=get_default_environment(), stderr=errlog, start_new_session=True
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        lines = BufferedByteReceiveStream(stdout)
        async with to_session:
            while True:
                try:
                    line = await lines.receive_until(b"\n", link.most)
                except anyio.DelimiterNotFound:
                    link.too_large = True
                    return
                except (anyio.IncompleteRead, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return  # the server closed its stdout, or ended
                item: SessionMessage | Exception
                try:
                    item = SessionMessage(
                        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    )
                except ValueError as exc:  # for the session to say, as the SDK's client does
                    item = exc
                try:
                    await to_session.send(item)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return  # the session is gone

    async def write() -> None:
        async with from_session:
            async for sent in from_session:
                text = sent.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    await stdin.send(text.encode() + b"\n")
                except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    await to_session.aclose()  # the session sees the end, not a hang
                    return

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            tasks.start_soon(write)
            try:
                yield read_stream, write_stream
            finally:
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process, at_once=link.too_large)
            for stream in (read_stream, write_stream, to_session, from_session):
                await stream.aclose()


async def _stop(process: anyio.abc.Process, at_once: bool) -> None:
    """MCP's shutdown: stdin closed, a moment to end, then the process group terminated
    (killed if it lingers). `at_once`: a server stuck writing what will not be read is
    terminated without the wait."""
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        if process.stdin is not None:
            await process.stdin.aclose()
    if not at_once:
        with anyio.move_on_after(STOP_SECONDS):
            await process.wait()
    if process.returncode is None:
        await terminate_posix_process_tree(process, STOP_SECONDS)
    with anyio.move_on_after(STOP_SECONDS), contextlib.suppress(Exception):
        await process.aclose()


@contextlib.asynccontextmanager
async def _watched(transport: Transport, link: Link) -> AsyncIterator[TransportStreams]:
    async with transport as (read_stream, write_stream):
        yield _WatchedRead(read_stream, link), write_stream


class _WatchedRead:
    """The transport's read stream, as the SDK's dispatcher reads it: its end marks the link
    closed, before the dispatcher fails the calls waiting on it."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], link: Link) -> None:
        self._inner = inner
        self._link = link

    @property
    def last_context(self) -> Any:  # the sender's context, where the transport keeps it
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._link.closed = True
            raise

    async def aclose(self) -> None:
        self._link.closed = True
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None
