"""A long-running `assistant` command (`run`, `serve`) in a subprocess, its output collected
by reader threads so a test can wait for a line instead of sleeping."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import IO, BinaryIO, Self

from tests.cli import ROOT, invoke, show_output

# A wait for a line or an exit: generous, for a busy machine (it ends when the condition holds).
TIMEOUT = 60.0
COMMAND_TIMEOUT = 300  # a command run to its end, its interpreter started under load too


def clean_env(**env: str) -> dict[str, str]:
    """The test process's environment without any setting of the app, plus `env`."""
    prefixes = ("SLACK_", "OPENAI_", "ASSISTANT_", "OTEL_")
    names = {"DATABASE_URL", "PORT"}
    base = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(prefixes) and name not in names
    }
    # Answers posted whole unless a test streams (tests/app/test_streaming.py sets it).
    # No model check at start either: its probe would take a scripted answer.
    defaults = {"PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "ASSISTANT_STREAM": "off",
                "ASSISTANT_MODEL_CHECK": "off"}  # fmt: skip
    return {**base, **defaults, **env}


class _Output:
    """What a pipe has carried so far; `wait_for` blocks on new data, not on a clock."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self._chunks: list[bytes] = []
        self._closed = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: IO[bytes]) -> None:
        while chunk := pipe.read1(65536):  # type: ignore[attr-defined]
            with self._cond:
                self._chunks.append(chunk)
                self._cond.notify_all()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    @property
    def text(self) -> str:
        with self._cond:
            return b"".join(self._chunks).decode("utf-8", errors="replace")

    def wait_for(self, pattern: str, timeout: float = TIMEOUT) -> re.Match[str]:
        """Until `pattern` (a regex) appears; fails if the pipe closes or time runs out."""
        found: list[re.Match[str]] = []

        def ready() -> bool:
            match = re.search(pattern, b"".join(self._chunks).decode("utf-8", errors="replace"))
            if match:
                found.append(match)
            return bool(match) or self._closed

        with self._cond:
            self._cond.wait_for(ready, timeout)
        if not found:
            raise AssertionError(f"{pattern!r} never appeared; output so far:\n{self.text}")
        return found[0]

    def join(self, timeout: float = TIMEOUT) -> None:
        self._thread.join(timeout)


def _started(
    argv: list[str], env: dict[str, str], cwd: Path, *, own_session: bool = False
) -> tuple[subprocess.Popen[bytes], _Output, _Output]:
    """`argv` running, its stdout and stderr read as they come."""
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=own_session,
    )
    assert process.stdout is not None and process.stderr is not None
    return process, _Output(process.stdout), _Output(process.stderr)


def _shown(stdout: _Output, stderr: _Output) -> None:
    """Once the process has exited: all of its output read, and passed on to pytest."""
    stdout.join()
    stderr.join()
    show_output(stdout.text, stderr.text)


class AssistantProcess:
    """`python -m assistant.cli ARGS` in `cwd` with exactly `env`."""

    def __init__(self, *args: str, env: dict[str, str], cwd: Path) -> None:
        argv = [sys.executable, "-m", "assistant.cli", *args]
        self.process, self.stdout, self.stderr = _started(argv, env, cwd)

    def stop(self, sig: signal.Signals | None = signal.SIGTERM, timeout: float = TIMEOUT) -> int:
        """Send `sig` (None: send nothing) and wait for the exit; kill (and fail) if it does
        not exit in time."""
        if sig is not None and self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(
                f"did not exit within {timeout}s of {sig}; stderr:\n{self.stderr.text}"
            ) from None
        _shown(self.stdout, self.stderr)
        return code

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.process.poll() is None:  # a failed test: never leave the process behind
            self.process.kill()
            self.process.wait()


class ProcessGroup:
    """`args` in a process group (and session) of its own, its output collected as
    `AssistantProcess` collects it. Left by an exception (a timeout, pytest-timeout's failure),
    every process of the group is killed: what `args` started too, which killing its own
    process alone (as `subprocess.run` does on a timeout) would leave running, handed to init.
    Left otherwise, whatever is still running fails the test (tests/process_check.py)."""

    def __init__(self, args: list[str], *, env: dict[str, str], cwd: Path) -> None:
        self.process, self.stdout, self.stderr = _started(args, env, cwd, own_session=True)

    def wait(self, timeout: float) -> int:
        """Until `args`'s process exits (its status), and its output is read; raises
        subprocess.TimeoutExpired."""
        code = self.process.wait(timeout)
        _shown(self.stdout, self.stderr)
        return code

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            with contextlib.suppress(ProcessLookupError):  # none of it left
                os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def run_assistant(
    *args: str, env: dict[str, str], cwd: Path, stdin: bytes | BinaryIO | None = None
) -> subprocess.CompletedProcess[str]:
    """`assistant ARGS` to completion in this process (tests/cli.py), with exactly `env` (see
    `clean_env`); its output as text."""
    result = invoke(args, env=env, cwd=cwd, stdin=stdin)
    return subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode(), result.stderr.decode()
    )


def run_assistant_process(
    *args: str, env: dict[str, str], cwd: Path, stdin: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m assistant.cli ARGS` to completion in a subprocess, with exactly `env`: for a
    test about the process (what its interpreter imports, how it exits)."""
    result = subprocess.run(
        [sys.executable, "-m", "assistant.cli", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        cwd=cwd,
        timeout=COMMAND_TIMEOUT,
    )
    show_output(result.stdout, result.stderr)
    return result
