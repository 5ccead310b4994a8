"""Reading and writing the files the commands take."""

from __future__ import annotations

import sys
from pathlib import Path

from assistant.commands import CliError
from context.render import printable
from context.storage import ThreadKey

NAME_SHOWN = 80  # characters of an argument an error message repeats


def named(argument: str) -> str:
    """An argument as an error message repeats it: on one line, its controls escaped, and
    cut when long (a 5,000-character argument is no file name anyone needs to read back)."""
    shown = printable(argument).replace("\n", "\\n")
    if len(shown) <= NAME_SHOWN:
        return shown
    return f"{shown[:NAME_SHOWN]}… ({len(argument):,} characters)"


def read_input(path: str) -> bytes:
    """The bytes of FILE, or of standard input for `-`."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {named(path)}: {exc.strerror}") from None


def write_output(text: str, out: str | None) -> None:
    """Write to FILE, or to standard output when no file is given."""
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {named(out)}: {exc.strerror}") from None


def file_or_thread(source: str) -> str | ThreadKey:
    """What a command's FILE-or-THREAD argument names: `-` or an existing file (a file wins,
    should a path look like a thread id), else a stored thread TEAM/CHANNEL/THREAD_TS."""
    why = "no such file"
    try:
        if source == "-" or Path(source).exists():
            return source
    except OSError as exc:  # a name the file system refuses (too long, …): no file by it
        why = exc.strerror or why
    try:
        return ThreadKey.parse(source)
    except ValueError:
        raise CliError(
            f"cannot read {named(source)}: {why} (nor is it a thread id TEAM/CHANNEL/THREAD_TS)"
        ) from None
