"""A pytest plugin (loaded by conftest.py): the suite fails when it leaves the git checkout it
runs in dirtier than it found it, e.g. a SQLite file made in the working directory because a
path was built without tmp_path. Outside a git checkout (an sdist, no git) it does nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

_BEFORE = pytest.StashKey[set[str] | None]()


def git_status(root: Path) -> set[str] | None:
    """`git status --porcelain` lines (untracked files listed one by one), None when `root`
    is not in a git checkout or git cannot be run."""
    try:
        result = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return set(result.stdout.splitlines()) if result.returncode == 0 else None


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_BEFORE] = git_status(session.config.rootpath)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_BEFORE, None)
    if before is None:
        return
    after = git_status(session.config.rootpath) or set()
    left = sorted(after - before)
    if not left:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    message = "the tests left the checkout dirty (write under tmp_path): " + ", ".join(left)
    if reporter is not None:
        reporter.write_line(message, red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
