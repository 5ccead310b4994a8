"""A pytest plugin (loaded by conftest.py): no process a test starts outlives it, however the
test ends (a failure, pytest-timeout's timeout, a crashed xdist worker).

Every pytest process (the only one, or xdist's controller and each worker) makes itself the
"child subreaper" of what it starts (Linux `PR_SET_CHILD_SUBREAPER`): a process whose parent
dies, such as the `assistant serve` of a `python -m bench` that a timeout killed, is handed to
it rather than to init, so it is still among its descendants, where it can be found.

- After each test's teardown, a descendant started since the test began and still running
  is killed, and the test fails, naming it (a teardown error).
- At the end of the session (xdist's workers ended, what they left handed to the
  controller), a descendant still running is killed, and the run fails, naming it.

Python's own helpers are not a test's: multiprocessing's resource tracker and forkserver,
started by the first test that needs one, serve the process until it exits (and then end).

Outside Linux (no /proc, no prctl) it does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
# How long a process a test has just signalled may take to exit before it counts as left
# behind: generous, for a loaded machine; a clean test waits for nothing. The tests of this
# check leave processes on purpose, and set it lower for the suites they run.
EXIT_GRACE = float(os.environ.get("TEST_EXIT_GRACE", "10"))
PROC = Path("/proc")

_BEFORE = pytest.StashKey[frozenset["Process"]]()
# The commands of the interpreter's helpers (multiprocessing's `spawnv_passfds` callers).
PYTHONS_OWN = (
    "from multiprocessing.resource_tracker import main",
    "from multiprocessing.forkserver import main",
)


@dataclass(frozen=True)
class Process:
    pid: int
    started: int  # clock ticks after boot: with the pid, the process (pids are reused)
    command: str = field(compare=False)  # as read then: a fork's changes when it execs

    def __str__(self) -> str:
        return f"{self.pid} ({self.command})"


def enabled() -> bool:
    return sys.platform == "linux" and PROC.is_dir()


def become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def _stat(pid: int) -> tuple[int, str, int] | None:
    """(parent pid, state, start time) from /proc/PID/stat; None if it is gone."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command, which may hold anything
    return int(fields[1]), fields[0], int(fields[19])


def _command(pid: int) -> str:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode("utf-8", errors="replace").strip()[:200] or "?"


def descendants(root: int | None = None) -> frozenset[Process]:
    """The running (not zombie) descendants of `root` (this process)."""
    root = os.getpid() if root is None else root
    children: dict[int, list[tuple[int, str, int]]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            parent, state, started = stat
            children.setdefault(parent, []).append((int(entry.name), state, started))
    found: set[Process] = set()
    todo = [root]
    while todo:
        for pid, state, started in children.get(todo.pop(), []):
            todo.append(pid)
            if state not in ("Z", "X"):  # exited: only its parent's wait is missing
                found.add(Process(pid, started, _command(pid)))
    return frozenset(found)


def started_since(before: frozenset[Process], holding: str, timeout: float) -> Process:
    """The first descendant not in `before` whose command holds `holding`, once there is
    one (looked for every 50 ms: a process's start sends no event); TimeoutError after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not (found := [p for p in descendants() - before if holding in p.command]):
        if time.monotonic() >= deadline:
            raise TimeoutError(f"no process running {holding!r} started within {timeout}s")
        time.sleep(0.05)
    return found[0]


def still_running(processes: frozenset[Process], grace: float) -> frozenset[Process]:
    """Those of `processes` still running after `grace` seconds at most."""
    deadline = time.monotonic() + grace
    while True:
        left = processes & descendants()
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


def kill(processes: frozenset[Process]) -> None:
    """SIGKILL each, and collect those that are this process's children."""
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL)
    for process in processes:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(process.pid, 0)  # adopted ones have no Popen to collect them


def left_behind(before: frozenset[Process]) -> frozenset[Process]:
    """The descendants started since `before` that outlived their grace, killed."""
    started = {p for p in descendants() - before if not any(h in p.command for h in PYTHONS_OWN)}
    left = still_running(frozenset(started), EXIT_GRACE)
    kill(left)
    return left


def describe(left: frozenset[Process]) -> str:
    return ", ".join(str(p) for p in sorted(left, key=lambda p: p.pid))


# --- the hooks ------------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    if enabled():
        become_subreaper()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    if enabled():
        item.stash[_BEFORE] = descendants()
    return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    before = item.stash.get(_BEFORE, None)
    try:
        result = yield
    finally:
        left = left_behind(before) if before is not None else frozenset()
    if left:
        pytest.fail(f"processes the test started outlived it (killed): {describe(left)}")
    return result


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, None, None]:
    """After every other sessionfinish (xdist's, which ends its workers), before the
    terminal summary."""
    result = yield
    if enabled() and not hasattr(session.config, "workerinput"):
        left = left_behind(frozenset())
        if left:
            message = f"processes the tests started outlived the session (killed): {describe(left)}"
            reporter = session.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(message, red=True)
            else:
                print(message, file=sys.stderr)
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    return result
