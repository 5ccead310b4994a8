"""What the agent reads of a chat completion's body, checked: a 200 from the model service is
not always a chat completion (a proxy's HTML sign-in page, a cut body, `message: null`).

The openai client builds its response objects without validating them, and returns a body
that is not JSON as a plain string; its strict mode would refuse whole answers of
OpenAI-compatible servers over fields the agent never reads. So only what is read is checked
here: the first choice's message (content, function tool calls) and the usage figures.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field, ValidationError


class NotACompletion(Exception):
    """The body of a 200 answer is not a usable chat completion; the message says what it
    was instead (for the log: no body content)."""


class Function(BaseModel):
    name: str
    arguments: str


class ToolCall(BaseModel):
    type: str = "function"
    function: Function


class Message(BaseModel):
    content: str | None = None
    tool_calls: list[ToolCall] | None = None


class Choice(BaseModel):
    message: Message


class PromptDetails(BaseModel):
    cached_tokens: int | None = None


class Usage(BaseModel):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: PromptDetails | None = None


class Completion(BaseModel):
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
