"""The assistant's tool calls: one pydantic model per tool.

Each model is at once the log entry's content, the validator of the model's arguments and
(through `assistant.model.tool_calls`) the OpenAI function schema. Field order is the canonical
key order: `toolCall` first, `reasoning` last. The docstrings and field descriptions document the
log's JSON Schema (`assistant schema`); the function schemas carry only names, types and bounds,
since what each tool does is said once, in the system message (`assistant.model.instructions`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from context.channels import SearchChannelType

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


TOOL_CALLS: tuple[type[ToolCall], ...] = (
    PostMessage, GetThreadHistory, ExpandEntry, FinishRequest, SearchSlack,
)  # fmt: skip
TOOL_CALLS_BY_NAME: dict[str, type[ToolCall]] = {tool.name: tool for tool in TOOL_CALLS}

AssistantContent = Annotated[
    PostMessage | GetThreadHistory | ExpandEntry | FinishRequest | SearchSlack,
    Field(discriminator="toolCall"),
]
