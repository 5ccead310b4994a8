"""Reading and writing the files the commands take."""

from __future__ import annotations

import sys
from pathlib import Path

from assistant.commands import CliError
from context.storage import ThreadKey


def read_input(path: str) -> bytes:
    """The bytes of FILE, or of standard input for `-`."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None


def write_output(text: str, out: str | None) -> None:
    """Write to FILE, or to standard output when no file is given."""
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror}") from None


def file_or_thread(source: str) -> str | ThreadKey:
    """What a command's FILE-or-THREAD argument names: `-` or an existing file (a file wins,
    should a path look like a thread id), else a stored thread TEAM/CHANNEL/THREAD_TS."""
    if source == "-" or Path(source).exists():
        return source
    try:
        return ThreadKey.parse(source)
    except ValueError:
        raise CliError(
            f"cannot read {source}: no such file (nor is it a thread id TEAM/CHANNEL/THREAD_TS)"
        ) from None
