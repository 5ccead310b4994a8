"""A pytest plugin (loaded by conftest.py): the tiers stay apart. A test that starts a process
belongs to the third tier (tests/processes/, the `processes` marker), which plain `pytest`
leaves out; one outside it that starts a process fails at its teardown, naming the command,
so the README's command never slows down unnoticed (docs/development.md, "Tests").

What counts is what the test's process starts, from any of its threads: a subprocess
(`subprocess`, asyncio's and anyio's, which go through it) or a fork (multiprocessing).
One exception: an MCP server the app itself starts over stdio (assistant/mcp/transports.py,
a tool's server as the product runs it, the demo's among them), the transport those tests
are about."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import threading
from collections.abc import Callable, Generator
from typing import Any

import pytest

# The tiers whose tests start processes by design, each run in a step of its own: the third
# tier, the benchmarks' smoke runs (`python -m bench NAME --smoke`) and the real model's
# (llama-server).
PROCESS_TIERS = ("processes", "bench", "real_model")
# Where a process is started by the app's MCP stdio transport (a frame of this file on the
# stack of the call that starts it).
APP_STDIO = os.path.join("assistant", "mcp", "transports.py")

_started: list[str] = []  # the current test's, from any thread
_running = threading.Event()  # set while a test outside the third tier runs
_lock = threading.Lock()


def _by_the_apps_stdio_transport() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.endswith(APP_STDIO):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _note(command: str) -> None:
    if _running.is_set() and not _by_the_apps_stdio_transport():
        with _lock:
            _started.append(command)


def _shown(args: Any) -> str:
    words = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    return " ".join(os.fsdecode(w) if isinstance(w, bytes | os.PathLike) else str(w) for w in words)


def _watch_popen() -> None:
    execute: Callable[..., Any] = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def watched(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> Any:
        _note(_shown(args))
        return execute(self, args, *rest, **kwargs)

    subprocess.Popen._execute_child = watched  # type: ignore[attr-defined]


def _watch_fork() -> None:
    fork = os.fork

    def watched() -> int:
        _note("a fork (multiprocessing or os.fork)")
        return fork()

    os.fork = watched


def pytest_configure(config: pytest.Config) -> None:
    # The standard library runs `uname -p` once per process, the first time anything reads the
    # whole of platform.uname() (the openai client does, for its headers): asked now, before the
    # watch, so that the first test of each worker to call the model is not taken for one that
    # starts a process.
    platform.processor()
    _watch_popen()
    _watch_fork()


def _in_a_process_tier(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(marker) is not None for marker in PROCESS_TIERS)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Watch from the setup of a test outside the third tier to the end of its teardown."""
    with _lock:
        _started.clear()
    if not _in_a_process_tier(item):
        _running.set()
    try:
        return (yield)
    finally:
        _running.clear()


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    result = yield
    with _lock:
        started = list(dict.fromkeys(_started))
    if started and not _in_a_process_tier(item):
        shown = "; ".join(started[:5]) + ("; …" if len(started) > 5 else "")
        pytest.fail(
            f"the test started a process ({shown}): a test that starts one belongs in "
            "tests/processes/ (docs/development.md, Tests)",
            pytrace=False,
        )
    return result
