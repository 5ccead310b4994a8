"""`TcpProxy`: a loopback TCP proxy a test can cut, as a database restart or a failover cuts
the app's connections. Point the app's DATABASE_URL at `proxy.port` instead of the server's.

- `cut()` closes every connection it carries and refuses new ones until `restore()`.
- `cut_on(b"UPDATE entries SET slack_ts")` closes the one connection that next sends those
  bytes instead of passing them on: the statement is in flight when its connection dies, and
  the server stays reachable for the next one. With `every=True`, every connection that sends
  them, until `restore()` (a statement that never gets through: `LISTEN`, say).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, Self, TypeVar

from assistant.fakes._server import DEFAULT_TIMEOUT

T = TypeVar("T")
CHUNK = 65536


class TcpProxy:
    def __init__(self, target_host: str = "127.0.0.1", target_port: int = 5432) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="TcpProxy")
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()  # both ends of every connection
        self._lock = threading.Lock()
        self._down = False
        self._cut_on: bytes | None = None
        self._cut_every = False
        self._statements_cut = 0

    def start(self) -> Self:
        self._thread.start()
        self._server = self._call(asyncio.start_server(self._accept, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        async def close() -> None:
            assert self._server is not None
            self._server.close()
            self._close_all()
            await self._server.wait_closed()

        self._call(close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(DEFAULT_TIMEOUT)
        self._loop.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- what a test does ---------------------------------------------------------------------

    def cut(self) -> None:
        """Close every connection now, and refuse new ones (accepted, closed at once) until
        `restore()`."""

        async def cut() -> None:
            with self._lock:
                self._down = True
            self._close_all()

        self._call(cut())

    def restore(self) -> None:
        with self._lock:
            self._down = False
            if self._cut_every:
                self._cut_on, self._cut_every = None, False

    def cut_on(self, statement: bytes, every: bool = False) -> None:
        """The next time the app sends `statement` (a part of a query's text), close that
        connection instead of passing it on; once, or `every` time until `restore()`."""
        with self._lock:
            self._cut_on, self._cut_every = statement, every

    @property
    def statements_cut(self) -> int:
        with self._lock:
            return self._statements_cut

    # -- the proxy ------------------------------------------------------------------------------

    def _call(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result(DEFAULT_TIMEOUT)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with self._lock:
            down = self._down
        if down:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._open.update((writer, up_writer))
        try:
            await asyncio.gather(
                self._pipe(reader, up_writer, watch=True), self._pipe(up_reader, writer)
            )
        finally:
            for end in (writer, up_writer):
                self._open.discard(end)
                end.transport.abort()

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, watch: bool = False
    ) -> None:
        """Copy until either side closes (then close the other, as a broken link would)."""
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await reader.read(CHUNK):
                if watch and self._cuts(data):
                    break
                writer.write(data)
                await writer.drain()
        writer.transport.abort()

    def _cuts(self, data: bytes) -> bool:
        with self._lock:
            if self._cut_on is None or self._cut_on not in data:
                return False
            if not self._cut_every:
                self._cut_on = None
            self._statements_cut += 1
            return True

    def _close_all(self) -> None:
        for end in list(self._open):
            end.transport.abort()
        self._open.clear()
