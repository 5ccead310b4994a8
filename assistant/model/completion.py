"""What the agent reads of a chat completion's body, checked: a 200 from the model service is
not always a chat completion (a proxy's HTML sign-in page, a cut body, `message: null`).

The openai client builds its response objects without validating them, and returns a body
that is not JSON as a plain string; its strict mode would refuse whole answers of
OpenAI-compatible servers over fields the agent never reads. So only what is read is checked
here: the first choice's message (content, function tool calls) and the usage figures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic import BaseModel, Field, ValidationError


@dataclass(frozen=True)
class RawToolCall:
    name: str
    arguments: str
    id: str | None = None  # the model's id for the call (`gen_ai.tool.call.id`)


@dataclass(frozen=True)
class ModelReply:
    """A model's answer, as the agent carries it out."""

    calls: list[RawToolCall] = field(default_factory=list)
    text: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float = 0.0
    response_id: str | None = None
    finish_reason: str | None = None
    # Attempts of this call cut by OPENAI_TIMEOUT before the one that answered
    # (`assistant.model.attempts`), and that timeout in seconds.
    timeouts: int = 0
    timeout: float = 0.0


class NotACompletion(Exception):
    """The body of a 200 answer is not a usable chat completion; the message says what it
    was instead (for the log: no body content)."""


class Function(BaseModel):
    name: str
    arguments: str


class ToolCall(BaseModel):
    id: str | None = None
    type: str = "function"
    function: Function


class Message(BaseModel):
    content: str | None = None
    tool_calls: list[ToolCall] | None = None


class Choice(BaseModel):
    message: Message
    finish_reason: str | None = None


class PromptDetails(BaseModel):
    cached_tokens: int | None = None


class Usage(BaseModel):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: PromptDetails | None = None


class Completion(BaseModel):
    id: str | None = None
    choices: list[Choice] = Field(min_length=1)
    model: str | None = None
    usage: Usage | None = None


def parse_completion(body: bytes, content_type: str) -> Completion:
    """The completion in a 200 answer's body, or NotACompletion saying what came instead."""
    kind = content_type.split(";")[0].strip() or "no content type"
    if not body.strip():
        raise NotACompletion("an empty body")
    if kind == "text/html" or body.lstrip()[:1] == b"<":
        raise NotACompletion(f"an HTML page ({kind})")
    try:
        data = json.loads(body)
    except ValueError:
        raise NotACompletion(f"a body that is not JSON ({kind})") from None
    try:
        return Completion.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the body"
        what = f"JSON that is not a chat completion ({where}: {first['msg']})"
        raise NotACompletion(what) from None


def reply_of(completion: Completion, latency_ms: float) -> ModelReply:
    """What the agent carries out of a whole answer."""
    choice = completion.choices[0]
    message = choice.message
    usage = completion.usage
    details = usage.prompt_tokens_details if usage else None
    return ModelReply(
        calls=[
            RawToolCall(call.function.name, call.function.arguments, call.id)
            for call in message.tool_calls or []
            if call.type == "function"
        ],
        text=message.content,
        model=completion.model,
        prompt_tokens=usage.prompt_tokens if usage else None,
        cached_tokens=details.cached_tokens if details else None,
        completion_tokens=usage.completion_tokens if usage else None,
        latency_ms=latency_ms,
        response_id=completion.id,
        finish_reason=choice.finish_reason,
    )
