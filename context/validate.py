"""Validation of saved logs: every problem, each with its entry and field
(docs/log-format.md#validation)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from context.entry import ENTRY_ADAPTER, ROLES, Entry, Index, Timestamp, Turn
from context.log import Tail
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


def validate_log(data: bytes | str) -> Report:
    """Check a whole document; the report holds the entries when there is no problem."""
    report = Report()
    items = _parse_array(data, report.problems)
    if items is None:
        return report
    tail: Tail | None = Tail()
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            report.problems.append(
                Problem(position, "(entry)", f"must be an object, found {_json_type(item)}")
            )
            tail = None
            continue
        entry = _check_fields(position, item, report.problems)
        if entry is not None:
            report.entries.append(entry)
        tail = _check_placement(position, item, tail, report.problems)
    if report.problems:
        report.entries = []
    return report


def _parse_array(data: bytes | str, problems: list[Problem]) -> list[object] | None:
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(Problem(None, "(encoding)", f"not UTF-8 text (byte {exc.start})"))
            return None
    data = data.removeprefix("\ufeff")
    if not data.strip():
        problems.append(Problem(None, "(document)", "the file is empty"))
        return None
    too_deep = Problem(None, "(document)", f"nested deeper than {MAX_DEPTH} arrays and objects")
    try:
        document = json.loads(data)
    except json.JSONDecodeError as exc:
        problems.append(
            Problem(
                None, "(document)", f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            )
        )
        return None
    except RecursionError:  # Python's parser recurses once per level: far past MAX_DEPTH
        problems.append(too_deep)
        return None
    if _deeper_than(document, MAX_DEPTH):
        problems.append(too_deep)
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
    """Whether arrays and objects nest more than `limit` levels (found without recursing)."""
    pending: list[tuple[Any, int]] = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        children = value.values() if isinstance(value, dict) else value
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            pending.extend((child, depth + 1) for child in children)
    return False


def _json_type(value: object) -> str:
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "true/false",
        type(None): "null",
    }.get(type(value), "a number")
