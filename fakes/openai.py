"""`FakeOpenAI`: an OpenAI-compatible Chat Completions server that answers from a script.

Tests queue responses with `script(...)` using the helpers below (`tool_calls`, `text`,
`error`, `rate_limited`, `hold`, `delay`; bodies that are not chat completions are in
`fakes.openai_bodies`); each request takes the next one. Every request
body is recorded before it is answered, so a test can see a held request.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from pydantic import TypeAdapter, ValidationError

from fakes._server import DEFAULT_TIMEOUT, BackgroundServer, drop_connection, in_thread
from fakes.openai_stream import REFUSAL, Streamed, StreamSettings, stream_completion

ToolCallSpec = tuple[str, "dict[str, Any] | str"]

# OpenAI caches prompt prefixes of 1024+ tokens in 128-token steps; the fake mimics that from
# a 4-characters-per-token estimate so benchmarks can see cache hits.
_CHARS_PER_TOKEN = 4
_CACHE_MIN_TOKENS = 1024
_CACHE_STEP_TOKENS = 128


# -- scripted responses ------------------------------------------------------------------------


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


class Hold:
    """A response that waits until `release()`: lets a test check what happened meanwhile."""

    def __init__(self, response: Response | None = None) -> None:
        self.response = response
        self._lock = threading.Lock()
        self._released = False
        self._reached = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def release(self) -> None:
        with self._lock:
            self._released = True
            waiters, self._waiters = self._waiters, []
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    def wait_reached(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Block until a request is being held here."""
        if not self._reached.wait(timeout):
            raise TimeoutError(f"no request reached the hold within {timeout}s")

    async def wait_reached_async(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        await in_thread(self.wait_reached, timeout)

    @property
    def reached(self) -> bool:
        return self._reached.is_set()

    async def _wait(self) -> None:
        self._reached.set()
        event = asyncio.Event()
        with self._lock:
            if self._released:
                return
            self._waiters.append((asyncio.get_running_loop(), event))
        await event.wait()


Response = Completion | Error | Raw | Disconnect | Delay | Hold | Streamed
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
_completion_ids = itertools.count(1)


# -- the server --------------------------------------------------------------------------------


class FakeOpenAI(BackgroundServer):
    """Fake model server. Point `openai.OpenAI(base_url=fake.base_url, api_key=...)` at it."""

    def __init__(
        self,
        *,
        default: DefaultResponse | None = None,
        transcription_text: str = "",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(host, port)
        # What an unscripted request gets; None answers 500 "fake model: script exhausted".
        # A callable is called with the request body (under the fake's lock) for each one.
        self.default = default
        self.transcription_text = transcription_text
        self._script: deque[Response] = deque()
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._holds: list[Hold] = []
        self.transcriptions: list[dict[str, Any]] = []
        self.invalid_requests: list[str] = []  # why requests were refused as malformed
        self.streaming = StreamSettings()  # how requests with "stream": true are answered

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def _build_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._handle_chat)
        app.router.add_post("/v1/audio/transcriptions", self._handle_transcription)
        return app

    async def _before_shutdown(self) -> None:
        with self._cond:
            holds = list(self._holds)
        for h in holds:  # never leave a handler waiting on a test that has finished
            h.release()

    # -- script and inspection -----------------------------------------------------------------

    def script(self, *responses: Response | list[Error] | list[Disconnect]) -> None:
        """Queue responses, answered in order, one per request."""
        with self._cond:
            for item in responses:
                self._script.extend(item if isinstance(item, list) else [item])

    @property
    def pending(self) -> int:
        """Scripted responses not yet used."""
        with self._cond:
            return len(self._script)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Parsed JSON bodies of every chat completion request, in arrival order."""
        with self._cond:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        with self._cond:
            return list(self._headers)

    def wait_for_requests(
        self, count: int, timeout: float = DEFAULT_TIMEOUT
    ) -> list[dict[str, Any]]:
        """Block until `count` requests arrived (answered or not); returns all so far."""
        return self._wait(
            lambda: list(self._requests) if len(self._requests) >= count else None,
            timeout,
            lambda: f"{len(self._requests)}/{count} requests arrived",
        )

    async def wait_for_requests_async(
        self, count: int, timeout: float = DEFAULT_TIMEOUT
    ) -> list[dict[str, Any]]:
        return await in_thread(self.wait_for_requests, count, timeout)

    # -- handlers ------------------------------------------------------------------------------

    async def _handle_chat(self, request: web.Request) -> web.Response:
        if not request.headers.get("Authorization", "").startswith("Bearer "):
            return _error_response(
                Error(
                    401,
                    "You didn't provide an API key.",
                    "invalid_request_error",
                    "invalid_api_key",
                )
            )
        try:
            body = await request.json()
        except ValueError:
            return _error_response(
                Error(400, "We could not parse the JSON body.", "invalid_request_error")
            )
        if not isinstance(body, dict) or "model" not in body or "messages" not in body:
            return _error_response(
                Error(400, "'model' and 'messages' are required.", "invalid_request_error")
            )
        problem = request_problem(body)
        if problem is not None:
            # A real service would refuse it too; tests see the 400 as a model failure.
            self.invalid_requests.append(problem)
            return _error_response(Error(400, problem, "invalid_request_error"))
        with self._cond:
            self._requests.append(body)
            self._headers.append(dict(request.headers))
            if body.get("stream") and self.streaming.mode == "refused":
                self._cond.notify_all()
                return _error_response(Error(400, REFUSAL, "invalid_request_error"))
            previous = self._requests[:-1]
            response = self._script.popleft() if self._script else self._default_for(body)
            if isinstance(response, Hold):
                self._holds.append(response)
            self._cond.notify_all()
        if isinstance(response, Disconnect):
            return drop_connection(request)
        return await self._respond(request, response, body, previous)

    async def _respond(
        self,
        request: web.Request,
        response: Response | None,
        body: dict[str, Any],
        previous: list[dict[str, Any]],
    ) -> web.StreamResponse:
        # Unwrap holds and delays (they may nest: hold(delay(1, text("x")))).
        while isinstance(response, Hold | Delay):
            if isinstance(response, Hold):
                await response._wait()
            else:
                await asyncio.sleep(response.seconds)
            if response.response is not None:
                response = response.response
            else:
                with self._cond:
                    response = self._default_for(body)
        if response is None:
            return _error_response(Error(500, "fake model: script exhausted", "server_error"))
        if isinstance(response, Error):
            return _error_response(response)
        if isinstance(response, Raw):
            headers = {"Content-Type": response.content_type}
            return web.Response(body=response.body, status=response.status, headers=headers)
        style = self.streaming.style
        if isinstance(response, Streamed):
            response, style = response.response, response.style
        completion = _completion(response, body, previous)
        if body.get("stream") and self.streaming.mode == "sse":
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return await stream_completion(request, completion, style, usage)
        return web.json_response(completion)

    def _default_for(self, body: dict[str, Any]) -> Response | None:
        default = self.default
        return default(body) if callable(default) else default

    async def _handle_transcription(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        record = {
            "model": form.get("model"),
            "filename": getattr(upload, "filename", None),
            "size": len(upload.file.read()) if hasattr(upload, "file") else 0,
            "fields": {k: v for k, v in form.items() if isinstance(v, str)},
        }
        with self._cond:
            self.transcriptions.append(record)
            self._cond.notify_all()
        if form.get("response_format") == "text":
            return web.Response(text=self.transcription_text)
        return web.json_response({"text": self.transcription_text})


_REQUEST = TypeAdapter(CompletionCreateParamsNonStreaming)
_STREAMED_REQUEST = TypeAdapter(CompletionCreateParamsStreaming)


def request_problem(body: dict[str, Any]) -> str | None:
    """What is wrong with a chat completion request by the openai package's own request
    types (messages, content parts, tools), or None. The types use lazily validated
    iterables: each is consumed to check its items."""
    try:
        params = (_STREAMED_REQUEST if body.get("stream") else _REQUEST).validate_python(body)
        for message in params["messages"]:
            content = message.get("content")
            if content is not None and not isinstance(content, str):
                list(content)
        list(params.get("tools") or [])
    except ValidationError as exc:
        return f"invalid request: {exc.error_count()} problems, first: {exc.errors()[0]['loc']}"
    return None


def _completion(
    response: Completion, body: dict[str, Any], previous: list[dict[str, Any]]
) -> dict[str, Any]:
    prompt = _prompt_text(body)
    prompt_tokens = max(1, len(prompt) // _CHARS_PER_TOKEN)
    completion_tokens = max(1, len(json.dumps(response.message)) // _CHARS_PER_TOKEN)
    usage = response.usage or {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {
            "cached_tokens": _cached_tokens(prompt, previous),
            "audio_tokens": 0,
        },
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }
    return {
        "id": f"chatcmpl-fake{next(_completion_ids):08d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake-model"),
        "choices": [
            {
                "index": 0,
                "message": response.message,
                "logprobs": None,
                "finish_reason": response.finish_reason,
            }
        ],
        "usage": usage,
        "service_tier": "default",
        "system_fingerprint": "fp_fake",
    }


def _prompt_text(body: dict[str, Any]) -> str:
    # Tools come before messages in what providers cache, so they join the prefix first.
    return json.dumps([body.get("tools"), body.get("messages")], ensure_ascii=False)


def _cached_tokens(prompt: str, previous: list[dict[str, Any]]) -> int:
    if len(prompt) // _CHARS_PER_TOKEN < _CACHE_MIN_TOKENS:
        return 0
    best = 0
    for earlier in previous[-50:]:
        best = max(best, _common_prefix(prompt, _prompt_text(earlier)))
    tokens = best // _CHARS_PER_TOKEN
    return tokens // _CACHE_STEP_TOKENS * _CACHE_STEP_TOKENS if tokens >= _CACHE_MIN_TOKENS else 0


def _common_prefix(a: str, b: str) -> int:
    # Binary search over slice comparisons: done in C, fast on prompts of 100k+ characters.
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _error_response(err: Error) -> web.Response:
    body = {"error": {"message": err.message, "type": err.type, "param": None, "code": err.code}}
    return web.json_response(body, status=err.status, headers=err.headers)
