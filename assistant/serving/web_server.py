"""uvicorn as `assistant serve` runs it: bounded in time and in connections, its logs on
stderr only (stdout is the trace's), and a SIGTERM a clean stop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
from collections.abc import Iterator
from types import FrameType
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

# A request's line and headers must all arrive within this many seconds of the connection
# opening (or of the previous response on it); its body then has the guard's own limit.
HEAD_TIMEOUT_S = 5.0
KEEP_ALIVE_S = 5  # an idle connection is closed after this long (uvicorn's default, said here)
# Connections (open or waiting for an answer) beyond which a request gets 503 at once.
# Every connection is bounded in time, so this bounds memory too: at most this many bodies
# of at most MAX_BODY_BYTES each being read.
MAX_CONNECTIONS = 200
BACKLOG = 1024  # connections the kernel queues before the server accepts them
MAX_HEAD_BYTES = 16 * 1024  # request line and headers; Slack's are under 2 KB
# A stopping server waits this long for the requests under way (events being recorded: at
# most READ_SECONDS and a write each), then the runs get theirs (RunScheduler.stop).
GRACEFUL_SHUTDOWN_S = 2

log = logging.getLogger(__name__)


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's head.

    uvicorn arms its only timer (keep-alive) after a response, and cancels it as soon as any
    byte arrives: a client that connects and sends nothing, half a request line or half its
    headers would hold the connection (and a place under `limit_concurrency`) forever."""

    _head_deadline: asyncio.TimerHandle | None = None

    # Transport, not asyncio's BaseTransport: as uvicorn's own H11Protocol declares it.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_arrived()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:  # a head arrived (or the connection ends)
            self._head_arrived()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._await_head()  # the next request on this connection

    def _await_head(self) -> None:
        if self._head_deadline is None:
            self._head_deadline = self.loop.call_later(HEAD_TIMEOUT_S, self._head_timed_out)

    def _head_arrived(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_timed_out(self) -> None:
        self._head_deadline = None
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
            # Part of a request came: say so once. A connection that sent nothing closes
            # quietly, as an idle keep-alive connection does.
            client = f"{self.client[0]}:{self.client[1]}" if self.client else "unknown client"
            log.warning(
                "closed the connection from %s: no complete request head within %g s",
                client,
                HEAD_TIMEOUT_S,
            )
        self.transport.close()


class Server(uvicorn.Server):
    """SIGTERM is how process managers (Procfile platforms, systemd, Docker) ask for a stop,
    SIGINT (Ctrl-C) how a person does: either ends the server gracefully, within a bound, and
    the process with status 0, as `assistant run` does. uvicorn re-raises the signal after
    its shutdown instead (exit status -15, or 130). A second signal changes nothing: the
    stop is bounded already (uvicorn's forced exit would skip ending the runs)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        with super().capture_signals():
            for sig in (signal.SIGTERM, signal.SIGINT):
                with contextlib.suppress(ValueError):  # not the main thread: no signals
                    signal.signal(sig, self._stop)
            yield  # uvicorn's handlers, then the original ones, come back when this ends

    def _stop(self, sig: int, frame: FrameType | None) -> None:
        self.should_exit = True

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if sockets and not self.should_exit:
            # uvicorn says where it listens only on sockets it bound itself; `serve` binds its
            # own first (`listening_socket`), and people and tests wait for the line.
            self._log_started_message(sockets)


class PortUnavailable(Exception):
    """The address to listen on cannot be had (in use, not this machine's, not allowed):
    one line, before the app starts."""


def listening_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound and listening before the app is built: uvicorn binds only
    after the app's startup, and a port in use was then an error log line, the app started
    and stopped again, and exit status 1."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family, backlog=BACKLOG)
    except OSError as exc:  # gaierror too: a host name that does not resolve
        # The errno's own words: create_server's message repeats the address as a tuple.
        errno = exc.errno or 0
        reason = os.strerror(errno) if errno > 0 else (exc.strerror or str(exc))
        raise PortUnavailable(f"cannot listen on {where}: {reason}") from None


def server_config(
    app: Any, host: str = "127.0.0.1", port: int = 0, **options: Any
) -> uvicorn.Config:
    """The uvicorn settings of `assistant serve` (and of the tests' app)."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=BoundedH11Protocol,
        ws="none",  # no WebSocket endpoint: an upgrade request is plain HTTP here
        lifespan="on",
        timeout_keep_alive=KEEP_ALIVE_S,
        limit_concurrency=MAX_CONNECTIONS,
        backlog=BACKLOG,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        # No access log: uvicorn writes it to stdout, the trace's stream, and a refused request
        # already has its one line (the guard's); every event Slack sends is in the trace.
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        **options,
    )
