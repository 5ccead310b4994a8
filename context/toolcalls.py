"""The assistant's tool calls: one pydantic model per tool.

Each model is at once the log entry's content, the validator of the model's arguments and
(through `assistant.model.tool_calls`) the OpenAI function schema. Field order is the canonical
key order: `toolCall` first, `reasoning` last. The docstrings and field descriptions document the
log's JSON Schema (`assistant schema`); the function schemas carry only names, types and bounds,
since what each tool does is said once, in the system message (`assistant.model.instructions`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_serializer

from context.channels import SearchChannelType
from context.memory import MAX_MEMORY_CHARS

HISTORY_DEFAULT_LIMIT = 20
HISTORY_MAX_LIMIT = 200


def require_in_schema(tag: str) -> Callable[[dict[str, Any]], None]:
    """Mark a union tag required in JSON Schema: it has a default only for convenience in
    code, a stored entry must carry it."""

    def extra(schema: dict[str, Any]) -> None:
        schema["required"] = [tag, *[f for f in schema.get("required", []) if f != tag]]
        schema["properties"][tag].pop("default", None)

    return extra


Reasoning = Annotated[
    str | None,
    Field(description="Why you are making this call, in one short sentence."),
]


class ToolCall(BaseModel):
    """Base of every tool call; `name` is the value of `toolCall`."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_extra=require_in_schema("toolCall")
    )
    name: ClassVar[str]

    @property
    def called(self) -> str:
        """The tool this call is of: its `toolCall`."""
        return self.name


class PostMessage(ToolCall):
    """Post a reply in the thread (Markdown, converted for Slack)."""

    name: ClassVar[str] = "postMessage"
    toolCall: Literal["postMessage"] = "postMessage"
    text: Annotated[str, Field(min_length=1, description="The message to post, in Markdown.")]
    reasoning: Reasoning = None


class GetThreadHistory(ToolCall):
    """Read the thread's Slack messages, including those from before the bot was mentioned;
    the result is the system entry after the call."""

    name: ClassVar[str] = "getThreadHistory"
    toolCall: Literal["getThreadHistory"] = "getThreadHistory"
    ascending: Annotated[
        bool, Field(strict=True, description="true for oldest first, false for newest first.")
    ] = False
    limit: Annotated[
        int | None,
        Field(
            strict=True,
            ge=1,
            le=HISTORY_MAX_LIMIT,
            description=f"At most this many messages (default {HISTORY_DEFAULT_LIMIT}).",
        ),
    ] = None
    reasoning: Reasoning = None


class FinishRequest(ToolCall):
    """End the work on the current request, once everything needed is posted."""

    name: ClassVar[str] = "finishRequest"
    toolCall: Literal["finishRequest"] = "finishRequest"
    reasoning: Reasoning = None


class ExpandEntry(ToolCall):
    """Read one log entry in full when the prompt shows it cut short; the result is the
    system entry after the call."""

    name: ClassVar[str] = "expandEntry"
    toolCall: Literal["expandEntry"] = "expandEntry"
    index: Annotated[int, Field(strict=True, ge=0, description="The entry's index.")]
    reasoning: Reasoning = None


class SearchSlack(ToolCall):
    """Search Slack's messages as the person who asked: only what they may read, in the
    conversation types the channel's settings allow; offered only where those settings turn
    Slack search on. The result, each message with its permalink, is the system entry after
    the call."""

    name: ClassVar[str] = "searchSlack"
    toolCall: Literal["searchSlack"] = "searchSlack"
    query: Annotated[
        str, Field(min_length=1, max_length=500, description="Keywords, or a question.")
    ]
    channel_types: Annotated[
        tuple[SearchChannelType, ...] | None,
        Field(
            min_length=1,
            description="Only these conversation types (of those the channel allows).",
        ),
    ] = None
    after: Annotated[date | None, Field(description="Only messages after this day.")] = None
    before: Annotated[date | None, Field(description="Only messages before this day.")] = None
    reasoning: Reasoning = None


class RememberForChannel(ToolCall):
    """Remember a fact for the channel (in a DM, for its person), because the person being
    answered asked to: every new thread of the channel starts with it, quoted as theirs
    (docs/log-format.md#channel-memory). Offered only where the channel's settings let that
    person write its memory. The result is the system entry after the call."""

    name: ClassVar[str] = "rememberForChannel"
    toolCall: Literal["rememberForChannel"] = "rememberForChannel"
    text: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_MEMORY_CHARS,
            description="What to remember, in the words of the person who asked.",
        ),
    ]
    reasoning: Reasoning = None


class ForgetForChannel(ToolCall):
    """Forget one of the channel's memories, because the person being answered asked to;
    offered where `rememberForChannel` is. The result is the system entry after the call."""

    name: ClassVar[str] = "forgetForChannel"
    toolCall: Literal["forgetForChannel"] = "forgetForChannel"
    memory: Annotated[
        str,
        Field(
            pattern=r"^m[0-9]{1,12}$",
            description="The memory's id as the memory entry names it (m12).",
        ),
    ]
    reasoning: Reasoning = None


class ScheduleRoutine(ToolCall):
    """Propose a routine for this channel because the person being answered asked for one:
    the thread shows Confirm and Cancel for that person, and the routine exists only once
    they confirm (docs/log-format.md#routines). A cron expression (with its IANA zone; the
    person's own by default) or one ISO-8601 time with its offset. Offered in channel threads
    only. The result is the system entry after the call."""

    name: ClassVar[str] = "scheduleRoutine"
    toolCall: Literal["scheduleRoutine"] = "scheduleRoutine"
    prompt: Annotated[
        str,
        Field(
            min_length=1,
            max_length=4000,  # a routine's prompt is one message (context.storage.schedule)
            description="What to ask the assistant each time, in the person's words.",
        ),
    ]
    cron: Annotated[str | None, Field(max_length=200, description="m h dom mon dow.")] = None
    tz: Annotated[str | None, Field(max_length=64, description="IANA zone of cron.")] = None
    at: Annotated[str | None, Field(max_length=64, description="Once: ISO-8601.")] = None
    reasoning: Reasoning = None


TOOL_CALLS: tuple[type[ToolCall], ...] = (
    PostMessage,
    GetThreadHistory,
    ExpandEntry,
    FinishRequest,
    SearchSlack,
    RememberForChannel,
    ForgetForChannel,
    ScheduleRoutine,
)
# A tool of an MCP server is `SERVER__TOOL`: the server's name as the file gives it (letters,
# digits, `-`: no `_`, so the first `__` ends it), then the tool's name as OpenAI takes a
# function's (docs/log-format.md#tools-of-mcp-servers).
SERVER_TOOL_PATTERN = r"^[A-Za-z0-9-]{1,32}__[A-Za-z0-9_-]{1,64}$"
SERVER_TOOL = re.compile(SERVER_TOOL_PATTERN)
SERVER_TOOL_FORM = "SERVER__TOOL (a tool of an MCP server)"


class ServerToolCall(ToolCall):
    """A call of a tool of an MCP server (the file ASSISTANT_MCP_FILE names): `toolCall` is
    `SERVER__TOOL`, and the members beside it are the tool's own arguments, any JSON value,
    as the server's schema asks for them; the result is the system entry after the call."""

    model_config = ConfigDict(
        extra="allow", frozen=True, json_schema_extra=require_in_schema("toolCall")
    )
    name: ClassVar[str] = "SERVER__TOOL"
    toolCall: Annotated[
        str,
        Field(
            pattern=SERVER_TOOL_PATTERN,
            description="The server's name, two underscores, the tool's name.",
        ),
    ] = "server__tool"
    reasoning: Reasoning = None

    @property
    def called(self) -> str:
        return self.toolCall

    @property
    def server(self) -> str:
        return self.toolCall.split("__", 1)[0]

    @property
    def tool(self) -> str:
        return self.toolCall.split("__", 1)[1]

    @property
    def arguments(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    @model_serializer(mode="plain")
    def _canonical(self) -> dict[str, Any]:
        """`toolCall`, the arguments as the model gave them (a `null` among them is the
        tool's to read, so it stays), `reasoning` last and only when there is one."""
        members: dict[str, Any] = {"toolCall": self.toolCall, **self.arguments}
        if self.reasoning is not None:
            members["reasoning"] = self.reasoning
        return members


TOOL_CALLS_BY_NAME: dict[str, type[ToolCall]] = {tool.name: tool for tool in TOOL_CALLS}
SERVER_TAG = "serverTool"  # the union's tag for every SERVER__TOOL


def _tool_tag(value: Any) -> Any:
    """Which model reads a tool call: a built-in by its name, any `SERVER__TOOL` the server
    tools' one; None (no `toolCall`) and any other value are the union's errors."""
    found = value.get("toolCall") if isinstance(value, dict) else getattr(value, "toolCall", None)
    if isinstance(found, str) and found not in TOOL_CALLS_BY_NAME and SERVER_TOOL.match(found):
        return SERVER_TAG
    return found if found is None or isinstance(found, str) else repr(found)


AssistantContent = Annotated[
    Annotated[PostMessage, Tag("postMessage")]
    | Annotated[GetThreadHistory, Tag("getThreadHistory")]
    | Annotated[ExpandEntry, Tag("expandEntry")]
    | Annotated[FinishRequest, Tag("finishRequest")]
    | Annotated[SearchSlack, Tag("searchSlack")]
    | Annotated[RememberForChannel, Tag("rememberForChannel")]
    | Annotated[ForgetForChannel, Tag("forgetForChannel")]
    | Annotated[ScheduleRoutine, Tag("scheduleRoutine")]
    | Annotated[ServerToolCall, Tag(SERVER_TAG)],
    Discriminator(_tool_tag),
]
