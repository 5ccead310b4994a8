"""What `FakeOpenAI` answers, for `script(...)` and `default`: the response kinds
(`Completion`, `Error`, `Raw`, `Disconnect`, `Delay`, `Hold`; `Streamed` and `Trickled`, the
paced answers of `assistant.fakes.openai.stream`) and builders for them
(`tool_calls`, `text`, `finish_request`, `error`, `rate_limited`, `disconnect`, `hold`,
`delay`). Bodies that are not chat completions are in `assistant.fakes.openai.bodies`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from assistant.fakes._server import Hold as Hold
from assistant.fakes.openai.stream import Streamed, Trickled

ToolCallSpec = tuple[str, "dict[str, Any] | str"]


@dataclass(frozen=True)
class Completion:
    """A successful chat.completion: `message` is the assistant message."""

    message: dict[str, Any] | None
    finish_reason: str
    usage: dict[str, Any] | None = None


@dataclass(frozen=True)
class Error:
    """An HTTP error with OpenAI's error body."""

    status: int
    message: str
    type: str
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    param: str | None = None  # the request's field the error is about


@dataclass(frozen=True)
class Raw:
    """An answer sent exactly as given: any status, content type and body."""

    body: bytes
    content_type: str = "application/json"
    status: int = 200


@dataclass(frozen=True)
class Disconnect:
    """No answer: the connection is closed on the request."""


@dataclass(frozen=True)
class Delay:
    """Answer `response` after `seconds` (simulated model latency, for benchmarks)."""

    seconds: float
    response: Response | None = None


Response = Completion | Error | Raw | Disconnect | Delay | Hold | Streamed | Trickled
# A default may decide per request, from the request's parsed JSON body (e.g. from the log
# the prompt carries), so concurrent threads each get the reply their state calls for.
DefaultResponse = Response | Callable[[dict[str, Any]], Response | None]


def tool_calls(*calls: ToolCallSpec, usage: dict[str, Any] | None = None) -> Completion:
    """The model calls tools: `tool_calls(("postMessage", {"text": "hi", "reasoning": "…"}))`.

    Dict arguments are JSON-encoded; a str is sent as-is (e.g. malformed JSON).
    """
    specs = [
        {
            "id": f"call_fake{next(_call_ids):06d}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args
                if isinstance(args, str)
                else json.dumps(args, ensure_ascii=False),
            },
        }
        for name, args in calls
    ]
    message = {"role": "assistant", "content": None, "tool_calls": specs, "refusal": None}
    return Completion(message, "tool_calls", usage)


def text(content: str, usage: dict[str, Any] | None = None) -> Completion:
    """The model answers in plain text instead of calling a tool."""
    return Completion({"role": "assistant", "content": content, "refusal": None}, "stop", usage)


def finish_request(reasoning: str = "Done.") -> Completion:
    return tool_calls(("finishRequest", {"reasoning": reasoning}))


def error(
    status: int = 500, times: int = 1, message: str = "The server had an error"
) -> list[Error]:
    """`times` consecutive HTTP errors (script() flattens the list)."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return [Error(status, message, kind)] * times


def rate_limited(retry_after: int = 1, times: int = 1) -> list[Error]:
    """`times` consecutive 429s with `retry-after` (seconds), in OpenAI's shape."""
    err = Error(
        429,
        "Rate limit reached for requests. Please try again in 1s.",
        "requests",
        "rate_limit_exceeded",
        {"retry-after": str(retry_after), "x-ratelimit-remaining-requests": "0"},
    )
    return [err] * times


def disconnect(times: int = 1) -> list[Disconnect]:
    """`times` requests whose connection is closed before any answer."""
    return [Disconnect()] * times


def hold(response: Response | None = None) -> Hold:
    """Hold the request until `.release()`; then answer `response` (default: the fake's default)."""
    return Hold(response)


def delay(seconds: float, response: Response | None = None) -> Delay:
    return Delay(seconds, response)


_call_ids = itertools.count(1)
