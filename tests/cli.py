"""The `assistant` command as a test runs it: its entry point (`assistant.cli.main`) in the
test's own process, with its own environment, working directory and standard streams; or, where
the process is what the test is about (a signal, a closed pipe, the interpreter's exit), a real
one (tests/process.py)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

from assistant.cli import main

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


def run_cli(
    *args: str,
    stdin: bytes | BinaryIO | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """`assistant ARGS` in process, in `cwd`, with this process's environment plus `env`."""
    return invoke(args, env={**os.environ, **(env or {})}, cwd=cwd or ROOT, stdin=stdin)


def invoke(
    args: tuple[str, ...],
    *,
    env: Mapping[str, str],
    cwd: Path,
    stdin: bytes | BinaryIO | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """`assistant ARGS` run by its entry point in this process, as the interpreter would run
    it: with exactly `env` in `os.environ`, `cwd` the working directory, `stdin` (none: empty)
    on standard input and standard output and error collected; an exception the command lets
    out is a traceback on stderr and status 1, `sys.exit`'s status its own. The environment
    and working directory are the process's: a test's background threads (a `RunningApp`)
    see them too while the command runs, so a command never runs beside an app it would
    change the settings of."""
    with _isolated(env, cwd, stdin) as (stdout, stderr):
        code = _status(args)
        sys.stdout.flush()
        sys.stderr.flush()
    result = subprocess.CompletedProcess(
        ["assistant", *args], code, stdout.getvalue(), stderr.getvalue()
    )
    show_output(result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace"))
    return result


def _status(args: tuple[str, ...]) -> int:
    try:
        return main(list(args))
    except SystemExit as stopped:  # argparse's usage errors, --help, --version
        if stopped.code is None or isinstance(stopped.code, int):
            return stopped.code or 0
        print(stopped.code, file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1


@contextlib.contextmanager
def _isolated(
    env: Mapping[str, str], cwd: Path, stdin: bytes | BinaryIO | None
) -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    source = io.BytesIO(stdin or b"") if stdin is None or isinstance(stdin, bytes) else stdin
    stdout, stderr = io.BytesIO(), io.BytesIO()
    # Text over bytes as a pipe gives them: not a terminal, UTF-8 (the command asks for it).
    streams = [
        io.TextIOWrapper(source, encoding="utf-8"),
        io.TextIOWrapper(stdout, encoding="utf-8", write_through=True),
        io.TextIOWrapper(stderr, encoding="utf-8", write_through=True),
    ]
    os.environ.clear()  # in place: a default argument may hold os.environ itself
    os.environ.update(env)
    os.chdir(cwd)
    sys.stdin, sys.stdout, sys.stderr = streams
    try:
        yield stdout, stderr
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        for stream in streams:
            stream.detach()  # the bytes stay readable, the caller's stdin file open
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def show_output(stdout: str, stderr: str) -> None:
    """Pass a command's output on to pytest's capture, where the secret check reads it."""
    sys.stdout.write(stdout)
    sys.stderr.write(stderr)
