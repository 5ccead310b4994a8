"""Reading and writing the files the commands take."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

from assistant.commands import CliError
from assistant.settings.input_files import TooDeep, TooLarge, load_yaml, read_bounded
from context.render import printable
from context.storage import ThreadKey
from context.validate import Problem, log_text

NAME_SHOWN = 80  # characters of an argument an error message repeats


def one_line(text: str) -> str:
    """Text from outside (a name, a model's, a file's) as one line of a report: its controls
    and bidi characters escaped as the trace escapes them (`printable`), its line breaks and
    tabs too, so that it can neither restyle the terminal nor forge a line of its own."""
    return printable(text).replace("\n", "\\n").replace("\t", "\\t")


def named(argument: str) -> str:
    """An argument as an error message repeats it: on one line, its controls escaped, and
    cut when long (a 5,000-character argument is no file name anyone needs to read back)."""
    shown = one_line(argument)
    if len(shown) <= NAME_SHOWN:
        return shown
    return f"{shown[:NAME_SHOWN]}… ({len(argument):,} characters)"


def read_input(path: str | Path) -> bytes:
    """The bytes of FILE, or of standard input for `-`, within `read_bounded`'s bound (beyond:
    CliError, one line): the one way a command reads what it is given."""
    try:
        return read_bounded(path)
    except OSError as exc:
        raise CliError(f"cannot read {shown_input(str(path))}: {exc.strerror or exc}") from None
    except TooLarge as exc:
        raise CliError(f"{shown_input(str(path))} is {exc}") from None


def read_text(path: str | Path) -> str:
    """`read_input` as UTF-8 text; CliError (one line) if it is not."""
    try:
        return read_input(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"{shown_input(str(path))} is not UTF-8 text (byte {exc.start})") from None


def read_log_text(path: str | Path) -> str:
    """A saved log's text, read as `read_input` reads; a file that is not UTF-8 text is no
    log to check: CliError, one line (exit 2, as any input that is not text)."""
    text = log_text(read_input(path))
    if isinstance(text, Problem):
        raise CliError(f"{shown_input(str(path))} is {text.message}")
    return text


def shown_input(path: str) -> str:
    """An input as messages name it: `<stdin>` for `-`."""
    return "<stdin>" if path == "-" else named(path)


def read_exported(path: str, key: str) -> tuple[str, list[Any]]:
    """The `key` list of a JSON or YAML file (`-`: standard input) as an `export` command
    writes it, and the file's name as shown in errors."""
    name = shown_input(path)
    text = read_text(path)
    try:
        document = load_yaml(text)  # JSON is YAML too
    except TooDeep as exc:
        raise CliError(f"{name} is {exc}") from None
    except yaml.YAMLError:
        raise CliError(f"{name} is not JSON or YAML") from None
    items = document.get(key) if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise CliError(f'{name} has no "{key}" list (as export writes it)')
    return name, items


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


def redaction_key_path(path: str, apart_from: Path | None) -> Path:
    """Where a redaction key may go: a new file, never inside what it redacted
    (`apart_from`: the redacted file or directory). Checked before anything is written."""
    where = Path(path).resolve()
    if apart_from is not None:
        redacted = apart_from.resolve()
        if where == redacted or redacted in where.parents:
            raise CliError(f"{named(path)}: the redaction key must be kept apart from the output")
    if where.exists():
        raise CliError(f"{named(path)}: exists; a redaction key is never written over")
    return where


def write_redaction_key(key: dict[str, str], path: str, apart_from: Path | None) -> None:
    """The key that undoes a redaction (placeholder to original), in its own new file."""
    where = redaction_key_path(path, apart_from)
    try:
        with open(where, "x", encoding="utf-8") as file:
            json.dump({"placeholders": key}, file, ensure_ascii=False, indent=1)
            file.write("\n")
    except FileExistsError:
        raise CliError(f"{named(path)}: exists; a redaction key is never written over") from None
    except OSError as exc:
        raise CliError(f"cannot write {named(path)}: {exc.strerror}") from None


def check_writable(out: str) -> None:
    """CliError (one line) now if FILE cannot be written, before any work whose result it is
    to hold: a file is opened for appending (nothing in it changes) and, if it was made
    only for the check, removed."""
    path = Path(out)
    existed = path.exists()
    try:
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise CliError(f"cannot write {named(out)}: {exc.strerror}") from None
    if not existed:
        path.unlink(missing_ok=True)


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
