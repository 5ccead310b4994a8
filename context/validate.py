"""Validation of saved logs: every problem, each with its entry and field
(docs/log-format.md#validation)."""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from context.entry import ENTRY_ADAPTER, ROLES, Entry, Index, SystemEntry, Timestamp, Turn
from context.log import Tail
from context.memory import is_memory_entry
from context.toolcalls import SERVER_TAG, SERVER_TOOL_FORM, TOOL_CALLS_BY_NAME

# A log nests three deep (the array, an entry, its content); every later step (the entry
# models, error messages, the prompt's JSON) recurses per level, so a document nested like
# 100,000 `[` is refused here, as a problem, before anything recurses into it.
MAX_DEPTH = 64


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a log. `entry` is the position in the array (None: the file)."""

    entry: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = "file" if self.entry is None else f"entry {self.entry}"
        return f"{where}, {self.field}: {self.message}"


class LogProblems(ValueError):
    """A document that is not a valid context log."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass
class Report:
    entries: list[Entry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass
class Scan:
    """What a read of a log found: its problems, how many entries it holds, and where each
    starts in the text (`entries_at` reads them again; None when the text was read whole)."""

    problems: list[Problem] = field(default_factory=list)
    count: int = 0
    # 8 bytes a start (a list of ints would take 36: most of what a scan holds).
    starts: array[int] | None = field(default_factory=lambda: array("Q"))


def validate_log(data: bytes | str) -> Report:
    """Check a whole document; the report holds the entries when there is no problem."""
    report = Report()
    report.problems = scan_log(data, report.entries).problems
    if report.problems:
        report.entries = []
    return report


def log_text(data: bytes | str) -> str | Problem:
    """The document as text (a byte order mark dropped), or why it is not UTF-8 text."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return Problem(None, "(encoding)", f"not UTF-8 text (byte {exc.start})")
    return data.removeprefix("\ufeff")


def scan_log(data: bytes | str, keep: list[Entry] | None = None) -> Scan:
    """Check a document entry by entry, holding one entry's objects at a time (a log of
    tens of megabytes is not held as objects whole); the valid entries are added to `keep`,
    which holds a log only when the scan found no problem."""
    scan = Scan()
    text = log_text(data)
    if isinstance(text, Problem):
        scan.problems.append(text)
        return scan
    if not text or text.isspace():  # what strip() would leave empty, without its copy
        scan.problems.append(Problem(None, "(document)", "the file is empty"))
        return scan
    try:
        _scan_items(_array_items(text, scan.starts), scan, keep)
    except _NotAnArray:
        # Whatever json.loads would say of it (a syntax error, a document that is no array):
        # the whole document read once more, as it always was, for exactly its words.
        scan.problems, scan.count, scan.starts = [], 0, None
        if keep is not None:
            keep.clear()
        items = _parse_array(text, scan.problems)
        if items is not None:
            _scan_items(iter(items), scan, keep)
    return scan


def entries_at(text: str, starts: Iterable[int]) -> Iterator[Entry]:
    """The entries a scan found without problems, read again from where each starts."""
    for start in starts:
        yield ENTRY_ADAPTER.validate_python(_DECODER.raw_decode(text, start)[0])


def _scan_items(items: Iterator[object], scan: Scan, keep: list[Entry] | None) -> None:
    tail: Tail | None = Tail()
    for position, item in enumerate(items):
        scan.count += 1
        if _deeper_than(item, MAX_DEPTH - 1):
            # As a document nested too deep is refused, one problem, whatever else is in
            # it; the rest is read to the end all the same: a syntax error after it wins.
            for _ in items:
                pass
            scan.problems = [_TOO_DEEP]
            scan.count, scan.starts = 0, None
            if keep is not None:
                keep.clear()
            return
        if not isinstance(item, dict):
            scan.problems.append(
                Problem(position, "(entry)", f"must be an object, found {_json_type(item)}")
            )
            tail = None
            continue
        entry = _check_fields(position, item, scan.problems)
        if isinstance(entry, SystemEntry) and position != 1 and is_memory_entry(entry.content):
            # The channel's memory is what a thread starts with, never news in the middle of
            # it (docs/log-format.md#channel-memory): one elsewhere is not the app's.
            scan.problems.append(
                Problem(position, "content", "a channel memory entry is entry 1, after the persona")
            )
        if entry is not None and keep is not None and not scan.problems:
            keep.append(entry)
        tail = _check_placement(position, item, tail, scan.problems)


class _NotAnArray(Exception):
    """The document is not a plain JSON array: json.loads says what it is instead."""


_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")  # json's own whitespace
_TOO_DEEP = Problem(None, "(document)", f"nested deeper than {MAX_DEPTH} arrays and objects")


def _array_items(text: str, starts: array[int] | None) -> Iterator[object]:
    """The items of the JSON array `text` is, one at a time, each where it starts added to
    `starts`; _NotAnArray for anything json.loads would not read as an array (the same
    whitespace, the same decoder)."""
    at = _skip_space(text, 0)
    if not text.startswith("[", at):
        raise _NotAnArray
    at = _skip_space(text, at + 1)
    closed = text.startswith("]", at)
    while not closed:
        try:
            item, end = _DECODER.raw_decode(text, at)
        except (json.JSONDecodeError, RecursionError):
            raise _NotAnArray from None
        if starts is not None:
            starts.append(at)
        yield item
        at = _skip_space(text, end)
        if text.startswith(",", at):
            at = _skip_space(text, at + 1)
            continue
        if not text.startswith("]", at):
            raise _NotAnArray
        closed = True
    if _skip_space(text, at + 1) != len(text):
        raise _NotAnArray


def _skip_space(text: str, at: int) -> int:
    found = _SPACE.match(text, at)
    return found.end() if found else at


def _parse_array(text: str, problems: list[Problem]) -> list[object] | None:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(
            Problem(
                None, "(document)", f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            )
        )
        return None
    except RecursionError:  # Python's parser recurses once per level: far past MAX_DEPTH
        problems.append(_TOO_DEEP)
        return None
    if _deeper_than(document, MAX_DEPTH):
        problems.append(_TOO_DEEP)
        return None
    if not isinstance(document, list):
        problems.append(
            Problem(
                None, "(document)", f"must be a JSON array of entries, found {_json_type(document)}"
            )
        )
        return None
    return document


class _Header(BaseModel):
    """The fields every entry has; checked on their own when the role is unusable, since
    the entry models cannot say more about an entry whose role they do not know."""

    model_config = ConfigDict(extra="allow")
    index: Index
    turn: Turn
    timestamp: Timestamp
    content: object


def _check_fields(position: int, item: dict[str, Any], problems: list[Problem]) -> Entry | None:
    try:
        return ENTRY_ADAPTER.validate_python(item)
    except ValidationError as exc:
        errors = exc.errors()
    if item.get("role") not in ROLES:
        try:
            _Header.model_validate(item)
        except ValidationError as exc:
            errors += exc.errors()
    for error in errors:
        problems.append(Problem(position, _field_name(item, error), _message(item, error)))
    return None


def _field_name(item: dict[str, Any], error: ErrorDetails) -> str:
    """Pydantic's location without the union tags it inserts (`user`, `postMessage`, …)."""
    loc = list(error["loc"])
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        return "content.toolCall" if loc and loc[-1] == "content" else "role"
    if loc and loc[0] in ROLES:
        loc = loc[1:]
    if (
        len(loc) > 1
        and loc[0] == "content"
        and (loc[1] in TOOL_CALLS_BY_NAME or loc[1] == SERVER_TAG)
    ):
        loc = [loc[0], *loc[2:]]
    return ".".join(str(p) for p in loc) or "(entry)"


def _message(item: dict[str, Any], error: ErrorDetails) -> str:
    kind = error["type"]
    if kind == "union_tag_invalid":
        if error["loc"] and error["loc"][-1] == "content":
            found = item.get("content", {}).get("toolCall")
            known = ", ".join([*TOOL_CALLS_BY_NAME, SERVER_TOOL_FORM])
            return f"unknown toolCall {found!r}; expected one of {known}"
        return f"unknown role {item.get('role')!r}; expected one of {', '.join(ROLES)}"
    if kind == "union_tag_not_found":
        if error["loc"] and error["loc"][-1] == "content":
            return "missing toolCall"
        return "missing role"
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"must be an object, found {_json_type(error.get('input'))}"
    if kind in ("string_type", "bool_type", "int_type"):
        wanted = {
            "string_type": "a string",
            "bool_type": "true or false",
            "int_type": "a whole number",
        }[kind]
        return f"must be {wanted}, found {_json_type(error.get('input'))}"
    message = error["msg"].removeprefix("Value error, ")
    if "input" in error:
        return f"{message} (found {json.dumps(error['input'], ensure_ascii=False)[:80]})"
    return message


def _check_placement(
    position: int, item: dict[str, Any], tail: Tail | None, problems: list[Problem]
) -> Tail | None:
    """Check `index` and `turn` against the rules (a None tail: unknown, after an entry with
    no valid role). After a wrong index the check goes on from the index the entry gives, so
    one gap is one problem; a wrong turn is not carried on, so one typo is one problem."""
    index, turn, role = item.get("index"), item.get("turn"), item.get("role")
    expected_index = position if tail is None else tail.next_index
    if _is_whole(index) and int(index) != expected_index:
        kind = "repeat" if int(index) < expected_index else "gap"
        problems.append(
            Problem(position, "index", f"expected {expected_index}, found {index} ({kind})")
        )
        expected_index = int(index)
    if role not in ROLES:
        return None
    if tail is None:
        if not _is_whole(turn):
            return None
        return Tail(expected_index + 1, int(turn), role if role != "system" else None)
    _, expected_turn, after = Tail(expected_index, tail.turn, tail.last_speaker).place(role)
    if _is_whole(turn) and int(turn) != expected_turn:
        problems.append(
            Problem(position, "turn", f"expected {expected_turn} by the turn rules, found {turn}")
        )
    return after


def _is_whole(value: object) -> TypeGuard[int | str]:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (
        isinstance(value, str) and value.isascii() and value.isdigit()
    )


def _deeper_than(document: object, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` levels (found without recursing;
    only containers are visited: most of a log is strings)."""
    if not isinstance(document, dict | list):
        return False
    if limit < 1:
        return True
    pending: list[tuple[dict[str, Any] | list[Any], int]] = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        for child in value.values() if isinstance(value, dict) else value:
            if isinstance(child, dict | list):
                if depth + 1 > limit:
                    return True
                pending.append((child, depth + 1))
    return False


def _json_type(value: object) -> str:
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "true/false",
        type(None): "null",
    }.get(type(value), "a number")
