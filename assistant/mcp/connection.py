"""One MCP server's live connection, on the official SDK's `Client`.

The SDK's client is an async context whose task group must be entered and left by one task:
a task of its own owns it, from connecting until the connection is closed or lost, and the
runs' tasks call through it. A server that cannot be reached, or is lost, leaves its tools
out (one log line) until a later run finds it back (tried again after `RETRY_SECONDS`, doubled
up to `MAX_RETRY_SECONDS` while it stays down). A message larger than the bound
(`assistant.mcp.transports`) is not read and drops the connection; an error the server
answers with is its refusal, and it stays connected. Every text of a server the app records
or logs is redacted (`assistant.mcp.redaction`)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client._transport import Transport
from mcp.client.session import ClientRequestContext
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from assistant.mcp.asking import current_asking
from assistant.mcp.config import Approval, ServerConfig
from assistant.mcp.redaction import Redaction
from assistant.mcp.transports import Link, PersonAuth, http_transport, stdio_transport
from context.toolcalls import SERVER_TOOL

log = logging.getLogger(__name__)

CONNECT_SECONDS = 30.0  # to connect and list the tools: a busy server is not a down one
WAIT_SECONDS = 10.0  # what a run waits for a connection being made before it goes without
RETRY_SECONDS = 5.0
MAX_RETRY_SECONDS = 300.0
MAX_TOOL_PAGES = 20  # a server that pages its tools forever is cut there
MAX_TOOLS = 200  # per server: every tool's schema goes with every model call
MAX_DESCRIPTION = 1_000  # characters of a tool's description offered to the model
# Of one tool's input schema (its compact JSON): every request carries it.
MAX_SCHEMA_CHARS = 16_000
MAX_PROGRESS = 200  # characters of a progress notification's message shown on a card
MAX_MESSAGE_BYTES = 4_000_000  # of one message read (ASSISTANT_MAX_MCP_RESULT_BYTES's default)
NOT_INCLUDED = "not included by the file"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class ServerTool:
    """A tool a server offers, as the model is offered it."""

    server: str
    name: str  # the server's own
    description: str
    schema: dict[str, Any]  # its input JSON Schema, as the server gave it
    read_only: bool  # the server says so (MCP's readOnlyHint)
    approve: Approval | None  # what the file says of it, if anything
    idempotent: bool = False  # the server says a second call changes nothing more (idempotentHint)
    approvers: str = "asker"  # who may allow a call: "asker", "editors", "usergroup:S…"
    approvals_channel: str | None = None  # where its requests are posted (None: the thread)

    @property
    def qualified(self) -> str:
        return f"{self.server}__{self.name}"

    @property
    def needs_approval(self) -> bool:
        """A person approves each call unless the server marks it read-only or the file says
        it never needs it; the file's `always` asks even for a read-only one."""
        if self.approve is not None:
            return self.approve == "always"
        return not self.read_only

    @property
    def may_repeat(self) -> bool:
        """Whether calling it again for one call of the model changes nothing more: a call
        a stopped process may have made is made again only then
        (assistant/run/approvals/unfinished.py)."""
        return self.read_only or self.idempotent


# Told each progress notification of a call, as the text its card shows (redacted, bounded).
Progress = Callable[[str], Awaitable[None]]


# The call's deadline (ASSISTANT_MCP_CALL_SECONDS), paused while a person is asked: their
# time is not the server's.
_call_clock: contextvars.ContextVar[asyncio.Timeout | None] = contextvars.ContextVar(
    "mcp_call_clock", default=None
)


@dataclass(frozen=True)
class CallOutcome:
    text: str
    failed: bool  # the tool said it failed, or the call could not be made
    sign_in: bool = False  # not made: the person must connect first (`auth: user`)
    # With `sign_in`: the scopes to connect with (a step-up on `insufficient_scope`); None:
    # the server's usual ones.
    scope: str | None = None


class Connection:
    """One server: connected on demand, its tools listed once a connection."""

    def __init__(
        self,
        config: ServerConfig,
        deadline: float,
        most: int = MAX_MESSAGE_BYTES,
        redaction: Redaction | None = None,
        auth: PersonAuth | None = None,
    ) -> None:
        """`auth`: a person's, for a connection of an `auth: user` server as them."""
        self.config = config
        self.auth = auth
        self.deadline = deadline
        self.most = most  # bytes of one message read (ASSISTANT_MAX_MCP_RESULT_BYTES)
        self.redaction = redaction or Redaction.of([config])
        self.left_out: list[tuple[str, str]] = []  # (tool, why) of its last listing
        self._client: Client | None = None
        self._link = Link(most)
        self._tools: list[ServerTool] = []
        self._owner: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._attempt: asyncio.Task[None] | None = None  # a connection being made
        self._retry_at = 0.0
        self._backoff = RETRY_SECONDS
        self._down: str | None = None  # why it is down, once said

    @property
    def connected(self) -> bool:
        return self._client is not None

    @property
    def down(self) -> str | None:
        """Why it is not connected, if an attempt failed or it was lost (redacted)."""
        return self._down if self._client is None else None

    @property
    def version(self) -> str | None:
        """The protocol version spoken with the server (docs/configuration.md#mcp-servers),
        while connected."""
        return self._client.protocol_version if self._client is not None else None

    @property
    def connect_seconds(self) -> float:
        """The most an attempt to connect and list the tools takes."""
        return max(self.deadline, CONNECT_SECONDS)

    async def tools(self, wait: float | None = None) -> list[ServerTool]:
        """Its tools, connecting first if it is not connected (and not waiting to be tried
        again); none while it is down. A run waits for a connection being made at most
        WAIT_SECONDS (`wait`): a server that hangs delays no answer longer; the attempt goes
        on, for the runs after it."""
        if self._client is None and self._attempt is None and time.monotonic() >= self._retry_at:
            self._attempt = asyncio.create_task(self._connect(), name=f"mcp {self.config.name}")
            self._attempt.add_done_callback(self._attempted)
        if self._attempt is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.shield(self._attempt), WAIT_SECONDS if wait is None else wait
                )
        return list(self._tools) if self._client is not None else []

    def _attempted(self, task: asyncio.Task[None]) -> None:
        self._attempt = None

    async def call(
        self, tool: str, arguments: dict[str, Any], progress: Progress | None = None
    ) -> CallOutcome:
        """The call's result; every text of it redacted. A result larger than `most` bytes is
        not read, and drops the connection; an error the server answered with is a refusal,
        the server staying connected; only a transport that closed is a server lost.
        `progress`: told the server's progress notifications of the call, as text. The task
        awaiting the call cancelled (the stop button), the SDK sends the server
        `notifications/cancelled` for it."""
        client, link = self._client, self._link
        name = self.config.name
        if client is None:
            return CallOutcome(f"the server {name!r} is not connected", True)
        try:
            async with asyncio.timeout(self.deadline) as clock:
                token = _call_clock.set(clock)
                try:
                    # No read timeout of the SDK's own: `clock` is the deadline, and a
                    # question to a person pauses it.
                    result = await client.call_tool(
                        tool,
                        arguments,
                        progress_callback=None if progress is None else self._progress(progress),
                    )
                finally:
                    _call_clock.reset(token)
        except TimeoutError:
            return CallOutcome(
                f"the server {name!r} did not answer within {self.deadline:g} s", True
            )
        except Exception as exc:
            if link.too_large:
                self._lost(exc, link)
                return CallOutcome(
                    f"the server {name!r} sent a result larger than {self.most:,} bytes "
                    "(ASSISTANT_MAX_MCP_RESULT_BYTES); it was not read, and the connection was "
                    "dropped",
                    True,
                )
            if link.compressed is not None:
                self._lost(exc, link)
                return CallOutcome(f"the server {name!r} {self._failure(exc, link)}", True)
            if isinstance(exc, MCPError) and not link.closed and client is self._client:
                why = self._plain(exc.error.message)[:MAX_DESCRIPTION] or f"error {exc.error.code}"
                return CallOutcome(f"the server refused the call: {why}", True)
            self._lost(exc, link)  # connected again on a later run
            return CallOutcome(f"the server {name!r} could not be reached", True)
        return CallOutcome(self._plain(result_text(result)), bool(result.is_error))

    def _progress(self, told: Progress) -> ProgressFnT:
        # The SDK runs each notification's callback in a task of its own: they may overlap.
        async def notified(progress: float, total: float | None, message: str | None) -> None:
            await told(progress_text(progress, total, self._plain(message or "")))

        return notified

    async def _asked(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """The server asks the person the call is made for (`current_asking`); the call's
        deadline waits meanwhile."""
        asking = current_asking.get()
        if asking is None:
            return types.ElicitResult(action="cancel")
        clock = _call_clock.get()
        when = None if clock is None else clock.when()
        left = None if when is None else when - _now()
        if clock is not None:
            clock.reschedule(None)
        try:
            return await asking(self.config.name, params, self._plain)
        finally:
            if clock is not None and left is not None and not clock.expired():
                clock.reschedule(_now() + left)

    def _plain(self, text: str) -> str:
        """A server's text as the app may record or log it: no control characters, no
        secret (`Redaction`)."""
        return self.redaction.text(_CONTROL.sub("", text))

    async def close(self) -> None:
        """The connection closed (a stdio server's process ends with it); one being made is
        given up."""
        self._closing.set()
        connecting = self._client is None
        for task in (self._attempt, self._owner):
            if task is None:
                continue
            if connecting:
                task.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await task

    async def _connect(self) -> None:
        ready: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        self._owner = asyncio.create_task(self._own(ready), name=f"mcp {self.config.name}")
        failure = await ready
        if failure is None:
            self._backoff = RETRY_SECONDS
            if self._down is not None:
                log.info("MCP server %s is back: its tools are offered again", self.config.name)
            self._down = None
            return
        self._retry_at = time.monotonic() + self._backoff
        if self._down != failure:  # one line, not one a run, while it stays down for one reason
            log.warning(
                "MCP server %s is down (%s): its tools are left out; tried again in %g s",
                self.config.name,
                failure,
                self._backoff,
            )
        self._down = failure
        self._backoff = min(self._backoff * 2, MAX_RETRY_SECONDS)

    async def _own(self, ready: asyncio.Future[str | None]) -> None:
        link = self._link = Link(self.most)
        try:
            async with contextlib.AsyncExitStack() as stack:
                async with asyncio.timeout(self.connect_seconds):
                    client = await stack.enter_async_context(
                        Client(
                            self._server(stack, link),
                            raise_exceptions=False,
                            elicitation_callback=self._asked,
                        )
                    )
                    self._tools = await self._list(client)
                self._client = client
                ready.set_result(None)
                await self._closing.wait()
        except BaseException as exc:  # its context left: down until tried again
            if not ready.done():
                ready.set_result(self._failure(exc, link))
            elif not self._closing.is_set():
                self._lost(exc, link)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._client = None

    def _server(self, stack: contextlib.AsyncExitStack, link: Link) -> Transport:
        config = self.config
        if config.url is None:
            return stdio_transport(config.command, link)
        headers = {name: value.get_secret_value() for name, value in config.headers.items()}
        return http_transport(config.url, headers, link, stack, self.auth)

    async def _list(self, client: Client) -> list[ServerTool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(MAX_TOOL_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        offered: list[ServerTool] = []
        self.left_out = []
        for tool in tools:
            why = self._refusal(tool)
            if why is not None:
                if why != NOT_INCLUDED:
                    self.left_out.append((self._plain(tool.name[:80]), why))
                    log.warning(
                        "MCP server %s: tool %r left out: %s",
                        self.config.name,
                        self._plain(tool.name[:80]),
                        why,
                    )
                continue
            annotations = tool.annotations
            offered.append(
                ServerTool(
                    server=self.config.name,
                    name=tool.name,
                    description=self._plain(tool.description or tool.title or "")[:MAX_DESCRIPTION],
                    schema=dict(tool.input_schema),
                    read_only=bool(annotations and annotations.read_only_hint),
                    approve=self.config.approve.get(tool.name),
                    idempotent=bool(annotations and annotations.idempotent_hint),
                    approvers=self.config.approvers.get(tool.name, "asker"),
                    approvals_channel=self.config.approvals_channel,
                )
            )
        if len(offered) > MAX_TOOLS:
            log.warning(
                "MCP server %s offers %d tools: the first %d kept",
                self.config.name,
                len(offered),
                MAX_TOOLS,
            )
        return offered[:MAX_TOOLS]

    def _refusal(self, tool: types.Tool) -> str | None:
        if not self.config.offers(tool.name):
            return NOT_INCLUDED
        qualified = f"{self.config.name}__{tool.name}"
        if not SERVER_TOOL.match(qualified) or len(qualified) > 64:
            return "its name is not one a model can call (letters, digits, _ and -, 64 at most)"
        properties = tool.input_schema.get("properties")
        if not isinstance(properties, dict):
            properties = {}
        if "reasoning" in properties or "toolCall" in properties:
            return "an argument is named reasoning or toolCall, which the log keeps for itself"
        if tool.input_schema.get("type", "object") != "object":
            return "its input schema is not an object"
        size = len(json.dumps(tool.input_schema, ensure_ascii=False, separators=(",", ":")))
        if size > MAX_SCHEMA_CHARS:
            return (
                f"its input schema has {size:,} characters, more than the {MAX_SCHEMA_CHARS:,} "
                "a tool's schema may take of every request"
            )
        return None

    def _lost(self, exc: BaseException, link: Link | None = None) -> None:
        """The connection dropped (a later run connects again), said in one line. `link`:
        the connection the failure came on; a newer one is left alone."""
        if self._client is None or (link is not None and link is not self._link):
            return
        self._down = self._failure(exc, link or self._link)
        log.warning(
            "MCP server %s lost (%s): its tools are left out until it is back",
            self.config.name,
            self._down,
        )
        self._client = None
        self._closing.set()

    def _failure(self, exc: BaseException, link: Link) -> str:
        """What went wrong, in a few words: the innermost error's type, or what the server
        said (redacted), or the bound a message passed."""
        if link.too_large:
            return f"it sent a message larger than {self.most:,} bytes"
        if link.compressed is not None:
            return f"it sent an answer compressed ({link.compressed}) though asked for none"
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        if isinstance(exc, TimeoutError):
            return "no answer in time"
        if isinstance(exc, MCPError):
            return f"it refused: {self._plain(exc.error.message)[:200]}"
        if isinstance(exc, FileNotFoundError | PermissionError) and self.config.command:
            what = "not found" if isinstance(exc, FileNotFoundError) else "not allowed to run"
            return f"its command {self._plain(self.config.command[0][:200])!r} was {what}"
        return type(exc).__name__


def _now() -> float:
    return asyncio.get_running_loop().time()


def progress_text(done: float, total: float | None, message: str) -> str:
    """A progress notification as its card shows it: the share done when the server gives a
    total (else the count it sent), then its message, cut to MAX_PROGRESS characters."""
    if total is not None and total > 0 and 0 <= done <= total:
        amount = f"{done / total:.0%}"
    else:
        amount = f"{done:g}"
    message = " ".join(message.split())
    text = f"{amount} · {message}" if message else amount
    return text if len(text) <= MAX_PROGRESS else text[: MAX_PROGRESS - 1] + "…"


def result_text(result: types.CallToolResult) -> str:
    """A tool's result as text: its text parts, other parts named, its structured content
    when it has no text."""
    parts: list[str] = []
    for item in result.content:
        if isinstance(item, types.TextContent):
            parts.append(item.text)
        elif isinstance(item, types.ImageContent | types.AudioContent):
            parts.append(f"[{item.type}: {item.mime_type}]")
        elif isinstance(item, types.ResourceLink):
            parts.append(f"[resource: {item.uri}]")
        elif isinstance(item, types.EmbeddedResource):
            resource = item.resource
            if isinstance(resource, types.TextResourceContents):
                parts.append(resource.text)
            else:
                parts.append(f"[resource: {resource.uri}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)
