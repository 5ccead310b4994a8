"""A local aiohttp server that runs on its own event loop in a background thread.

The fakes must serve sync tests, async tests (whose loop also runs the app under test) and
other processes alike, so they never share the caller's loop. State is guarded by one
`threading.Condition`; waiting for something to happen is done on that condition, never by
sleeping.
"""

from __future__ import annotations

import asyncio
import ipaddress
import threading
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Self, TypeVar

from aiohttp import web

T = TypeVar("T")

# How long a test waits for what it expects (a call, a request, a hold reached): a wait ends
# when its condition holds, so this only bounds a failing one; generous for a busy machine.
DEFAULT_TIMEOUT = 60.0


class BackgroundServer:
    """Base class: subclasses add routes in `_build_app` and keep their state under `_cond`."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        if not is_loopback(host):
            # Installed with the package, a fake must never be reachable from the network: it
            # answers anyone, with any token.
            raise ValueError(f"{type(self).__name__} serves on loopback only, not on {host!r}")
        self.host = host
        self._requested_port = port
        self.port: int | None = None
        self._cond = threading.Condition()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def _build_app(self) -> web.Application:
        raise NotImplementedError

    async def _before_shutdown(self) -> None:
        """Hook: close websockets, release held responses, so shutdown does not hang."""

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return f"http://{self.host}:{self.port}"

    def start(self) -> Self:
        if self._thread is not None:
            raise RuntimeError(f"{type(self).__name__} already started")
        ready = threading.Event()
        failure: list[BaseException] = []
        loop = asyncio.new_event_loop()

        async def setup() -> None:
            # A short shutdown timeout: a test that stops the fake mid-request must not hang.
            runner = web.AppRunner(self._build_app(), access_log=None, shutdown_timeout=1.0)
            await runner.setup()
            site = web.TCPSite(runner, self.host, self._requested_port)
            await site.start()
            self._runner = runner
            self.port = runner.addresses[0][1]

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(setup())
            except BaseException as exc:  # surfaced to the starting thread below
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name=type(self).__name__, daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = self._loop = None
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        loop = self._loop

        async def shutdown() -> None:
            await self._before_shutdown()
            if self._runner is not None:
                await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=DEFAULT_TIMEOUT)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(timeout=DEFAULT_TIMEOUT)
        self._thread = self._loop = self._runner = None
        self.port = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- helpers for subclasses ----------------------------------------------------------------

    def _run_on_loop(self, coro: Coroutine[Any, Any, T], timeout: float = DEFAULT_TIMEOUT) -> T:
        """Run a coroutine on the server's loop from any other thread and return its result."""
        if self._loop is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        if _running_loop() is self._loop:
            raise RuntimeError("called from the fake's own loop; this would deadlock")
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return future.result(timeout=timeout)

    def _wait(
        self, check: Callable[[], T | None], timeout: float, describe: Callable[[], str]
    ) -> T:
        """Block until `check()` returns something truthy (evaluated under the lock)."""
        result: list[T] = []

        def ready() -> bool:
            value = check()
            if value:
                result.append(value)
                return True
            return False

        with self._cond:
            if not self._cond.wait_for(ready, timeout=timeout):
                raise TimeoutError(
                    f"{type(self).__name__}: timed out after {timeout}s: {describe()}"
                )
        return result[-1]

    def _notify(self) -> None:
        with self._cond:
            self._cond.notify_all()


class Hold:
    """A request that waits until `release()`: lets a test check what happened meanwhile.
    `response`: what the fake answers once released (None: what it would have answered)."""

    def __init__(self, response: Any = None) -> None:
        self.response = response
        self._lock = threading.Lock()
        self._released = False
        self._reached = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def release(self) -> None:
        with self._lock:
            self._released = True
            waiters, self._waiters = self._waiters, []
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    def wait_reached(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Block until a request is being held here."""
        if not self._reached.wait(timeout):
            raise TimeoutError(f"no request reached the hold within {timeout}s")

    async def wait_reached_async(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        await in_thread(self.wait_reached, timeout)

    @property
    def reached(self) -> bool:
        return self._reached.is_set()

    async def _wait(self) -> None:
        self._reached.set()
        event = asyncio.Event()
        with self._lock:
            if self._released:
                return
            self._waiters.append((asyncio.get_running_loop(), event))
        await event.wait()


def is_loopback(host: str) -> bool:
    """Whether `host` is an address of this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


async def in_thread(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a blocking wait in a worker thread, so an async test's loop (which may be running
    the app under test) keeps going while the test waits."""
    return await asyncio.to_thread(func, *args, **kwargs)


def drop_connection(request: web.Request) -> web.Response:
    """Close the request's connection unanswered, as a crashed server or a broken network
    does; the response returned is never written."""
    if request.transport is not None:
        request.transport.close()
    return web.Response()
