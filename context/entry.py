"""Entries of the context log (docs/log-format.md#entries) and their canonical JSON
(docs/log-format.md#canonical-json)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    WithJsonSchema,
)

from context.toolcalls import AssistantContent, ToolCall, require_in_schema

Role = Literal["system", "user", "assistant"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant")

TIMESTAMP_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"
_TIMESTAMP_RE = re.compile(TIMESTAMP_PATTERN)


def format_timestamp(moment: datetime) -> str:
    """The log's timestamp form: UTC, whole seconds, `Z` suffix."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_timestamp() -> str:
    return format_timestamp(datetime.now(UTC))


def _check_timestamp(value: object) -> object:
    if isinstance(value, str):
        if not _TIMESTAMP_RE.match(value):
            raise ValueError("must look like 2025-04-04T12:33:00Z (UTC, whole seconds)")
        if not _real_moment(value):
            raise ValueError("is not a real date and time")
    return value


def _real_moment(value: str) -> bool:
    """What `datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")` accepts of a string the
    pattern matched (which lets a final newline through), without strptime's cost (a
    locale lookup per call: most of the time a long log's check took)."""
    if not value.isascii():  # other digits \d matches: strptime's own rules, field by field
        try:
            datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
        except ValueError:
            return False
        return True
    if len(value) != len("2025-04-04T12:33:00Z"):
        return False
    try:
        datetime(
            int(value[0:4]), int(value[5:7]), int(value[8:10]),
            int(value[11:13]), int(value[14:16]), int(value[17:19]),
        )  # fmt: skip
    except ValueError:
        return False
    return True


def _whole_number(value: object) -> object:
    """Accept an integer or a digit string such as the seed's `"turn": "0"`; never a bool."""
    if isinstance(value, bool):
        raise ValueError("must be a whole number, not true/false")
    if isinstance(value, str):
        if not value.isascii() or not value.isdigit():
            raise ValueError("must be a whole number")
        return int(value)
    return value


_DIGITS_OR_INT = {
    "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^[0-9]+$"}]
}

Timestamp = Annotated[
    str,
    Field(pattern=TIMESTAMP_PATTERN, description="UTC, whole seconds, Z suffix"),
    BeforeValidator(_check_timestamp),
]
Index = Annotated[int, Field(ge=0, strict=True)]
Turn = Annotated[
    int,
    Field(ge=0),
    BeforeValidator(_whole_number),
    WithJsonSchema({**_DIGITS_OR_INT, "description": "an integer; a digit string is accepted"}),
]


class UserContent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    userid: Annotated[str, Field(description="Slack mention form of the author, e.g. <@U123ABC>")]
    text: str


class _Entry(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_extra=require_in_schema("role")
    )
    index: Index
    turn: Turn
    timestamp: Timestamp
    _json: str | None = PrivateAttr(default=None)

    def canonical_json(self) -> str:
        """Compact canonical JSON, computed once per entry (the prompt joins these)."""
        if self._json is None:
            self._json = json.dumps(self.as_dict(), ensure_ascii=False, separators=(",", ":"))
        return self._json

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


# What the system entry that ends a failed run starts with (docs/log-format.md#how-a-run-ends).
FAILURE_PREFIX = "Error: "
# A system entry that ends a run stopped by a person (the stop button): no apology.
STOP_PREFIX = "Stopped: "
# A system entry that ends a run whose model call would have passed the channel's budget
# (docs/operations.md#spend-limits): no model call was made.
BUDGET_PREFIX = "Budget: "
# How the system entries that end a run begin (besides finishRequest, an assistant entry).
RUN_ENDS = (FAILURE_PREFIX, "Stopped after ", STOP_PREFIX, BUDGET_PREFIX)


class SystemEntry(_Entry):
    role: Literal["system"] = "system"
    content: str


class UserEntry(_Entry):
    role: Literal["user"] = "user"
    content: UserContent


class AssistantEntry(_Entry):
    role: Literal["assistant"] = "assistant"
    content: AssistantContent


Entry = Annotated[SystemEntry | UserEntry | AssistantEntry, Field(discriminator="role")]
Content = str | UserContent | ToolCall

ENTRY_ADAPTER: TypeAdapter[Entry] = TypeAdapter(Entry)
LOG_ADAPTER: TypeAdapter[list[Entry]] = TypeAdapter(list[Entry])

_ENTRY_CLASS: dict[Role, type[SystemEntry | UserEntry | AssistantEntry]] = {
    "system": SystemEntry,
    "user": UserEntry,
    "assistant": AssistantEntry,
}


def role_of(content: Content) -> Role:
    """Each role has its own content type, so the content alone says who speaks."""
    if isinstance(content, str):
        return "system"
    if isinstance(content, UserContent):
        return "user"
    if isinstance(content, ToolCall):
        return "assistant"
    raise TypeError(f"not entry content: {type(content).__name__}")


def make_entry(index: int, turn: int, timestamp: str, content: Content) -> Entry:
    return _ENTRY_CLASS[role_of(content)](
        index=index, turn=turn, timestamp=timestamp, content=content
    )


def entry_from_json(text: str | bytes) -> Entry:
    """Parse one entry this product stored, keeping its canonical text as it is."""
    entry = ENTRY_ADAPTER.validate_json(text)
    entry._json = text.decode() if isinstance(text, bytes) else text
    return entry
