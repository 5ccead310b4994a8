"""Streamed answers of the fake model: a request with `"stream": true` is answered with
Server-Sent Events in the Chat Completions API's chunk shapes.

As OpenAI (and vLLM) send them: a first chunk with the role and the first tool call's id,
type and name (its arguments ""), the arguments in token-sized pieces, the next call likewise,
a last chunk with `finish_reason: "tool_calls"` (or "stop" for text), then, when the request
asked for `stream_options.include_usage`, a chunk with empty `choices` and the usage (every
chunk before it carrying `"usage": null`), then `data: [DONE]`. `StreamStyle(whole_calls=True)`
sends every call whole in one chunk instead, as llama.cpp and Ollama do.

Servers that keep a connection busy without answering: `StreamStyle(keep_alive=1.0)` sends an
SSE comment line `: keep-alive` every second while the stream waits (at a pause; with a pause
never released, it never finishes), `tokens_per_second` trickles the tokens, and `Trickled`
sends a whole (non-streamed) answer's body a few bytes at a time.

A server that cannot stream is `StreamSettings(mode="ignored")` (it answers a streamed request
with a plain chat.completion) or `mode="refused"` (HTTP 400).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from aiohttp import web

# A token of the model's output, roughly as a BPE tokenizer cuts JSON and prose (about four
# characters): escapes such as \\u00e9 get cut across pieces too.
_TOKEN = re.compile(r"\s?[A-Za-z]{1,6}|\s?\d{1,3}|\s+|[^A-Za-z\d\s]{1,2}", re.DOTALL)


class Gate(Protocol):
    """What a pause waits on: a `assistant.fakes.openai.server.Hold`."""

    async def _wait(self) -> None: ...


@dataclass(frozen=True)
class StreamStyle:
    """How one answer is streamed."""

    tokens_per_second: float | None = None  # None: as fast as the connection goes
    whole_calls: bool = False  # every tool call in one chunk (llama.cpp, Ollama)
    # (count, gate): after that many tokens, wait until the gate (a Hold) is released
    pauses: tuple[tuple[int, Gate], ...] = ()
    cut_after: int | None = None  # after that many tokens, the connection is closed
    keep_alive: float | None = None  # seconds between `: keep-alive` lines while it waits
    sent: list[float] | None = field(default=None, compare=False)  # when each token went out


@dataclass
class StreamSettings:
    """What the fake does with streamed requests (`FakeOpenAI.streaming`)."""

    mode: Literal["sse", "ignored", "refused"] = "sse"
    style: StreamStyle = field(default_factory=StreamStyle)


@dataclass(frozen=True)
class Trickled:
    """A scripted answer sent whole (`application/json`, whatever `stream` says) but slowly:
    `piece` bytes of its body every `every` seconds, as a slow proxy or server may."""

    response: Any  # a `assistant.fakes.openai.server.Completion`
    piece: int = 16
    every: float = 0.1


@dataclass(frozen=True)
class Streamed:
    """A scripted answer streamed its own way: `Streamed(tool_calls(...), StreamStyle(...))`."""

    response: Any  # a `assistant.fakes.openai.server.Completion`
    style: StreamStyle


REFUSAL = "Streaming is not supported when tools are given."


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def chunks(completion: dict[str, Any], style: StreamStyle, usage: bool) -> Iterator[dict[str, Any]]:
    """The chunks of a chat.completion streamed, each with `token: True` when it carries a
    token of output (what the token rate, pauses and cuts count)."""
    base = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
        "service_tier": completion.get("service_tier"),
        "system_fingerprint": completion.get("system_fingerprint"),
    }
    if usage:
        base["usage"] = None
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        entry = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**base, "choices": [entry]}

    calls = message.get("tool_calls") or []
    if calls and style.whole_calls:
        whole = [{"index": i, **call} for i, call in enumerate(calls)]
        yield chunk({"role": "assistant", "content": None, "tool_calls": whole}) | {"token": True}
    elif calls:
        for i, call in enumerate(calls):
            head = {
                "index": i,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""},
            }
            first: dict[str, Any] = {"tool_calls": [head]}
            if i == 0:
                first = {"role": "assistant", "content": None, **first, "refusal": None}
            yield chunk(first)
            for piece in tokens(call["function"]["arguments"]):
                delta = {"tool_calls": [{"index": i, "function": {"arguments": piece}}]}
                yield chunk(delta) | {"token": True}
    else:
        yield chunk({"role": "assistant", "content": "", "refusal": None})
        for piece in tokens(message.get("content") or ""):
            yield chunk({"content": piece}) | {"token": True}
    yield chunk({}, choice["finish_reason"])
    if usage:
        yield {**base, "choices": [], "usage": completion["usage"]}


async def stream_completion(
    request: web.Request, completion: dict[str, Any], style: StreamStyle, usage: bool
) -> web.StreamResponse:
    """Write `completion` as Server-Sent Events, at the style's pace."""
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    sent = 0
    try:
        for item in chunks(completion, style, usage):
            counts = item.pop("token", False)
            if counts and style.cut_after is not None and sent >= style.cut_after:
                if request.transport is not None:
                    request.transport.close()  # the server died mid-answer
                return response
            for count, gate in style.pauses if counts else ():
                if sent == count:
                    await _wait_keeping_alive(response, gate, style.keep_alive)
            await response.write(f"data: {json.dumps(item, ensure_ascii=False)}\n\n".encode())
            if counts:
                sent += 1
                if style.sent is not None:
                    style.sent.append(time.monotonic())
                if style.tokens_per_second:
                    await asyncio.sleep(1 / style.tokens_per_second)  # the model's pace
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
    except ConnectionResetError:
        pass  # the client went away (a process killed mid-answer): nobody to write to
    return response


async def _wait_keeping_alive(
    response: web.StreamResponse, gate: Gate, every: float | None
) -> None:
    """Until the gate opens, an SSE comment every `every` seconds meanwhile (clients skip
    them; each one is a read that does not time out)."""
    if every is None:
        await gate._wait()
        return
    opened = asyncio.ensure_future(gate._wait())
    try:
        while not (await asyncio.wait({opened}, timeout=every))[0]:
            await response.write(b": keep-alive\n\n")
    finally:
        opened.cancel()


async def trickle(request: web.Request, body: bytes, answer: Trickled) -> web.StreamResponse:
    """Write `body` as `answer` says, a piece at a time."""
    response = web.StreamResponse(
        headers={"Content-Type": "application/json", "Content-Length": str(len(body))}
    )
    await response.prepare(request)
    try:
        for start in range(0, len(body), answer.piece):
            await response.write(body[start : start + answer.piece])
            await asyncio.sleep(answer.every)  # the server's pace
        await response.write_eof()
    except ConnectionResetError:
        pass  # the client gave up waiting: nobody to write to
    return response
