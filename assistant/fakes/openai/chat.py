"""The Chat Completions endpoint of `FakeOpenAI`: each request is checked against the openai
package's own request types, recorded, and answered with the next scripted response (or the
default), in OpenAI's `chat.completion` shape with usage (cached tokens included).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections import deque
from typing import Any

from aiohttp import web
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from pydantic import TypeAdapter, ValidationError

from assistant.fakes._server import drop_connection
from assistant.fakes.openai.responses import (
    Completion,
    DefaultResponse,
    Delay,
    Disconnect,
    Error,
    Hold,
    Raw,
    Response,
)
from assistant.fakes.openai.servers import ServerRefusals
from assistant.fakes.openai.stream import (
    REFUSAL,
    Streamed,
    StreamSettings,
    Trickled,
    stream_completion,
    trickle,
)

# OpenAI caches prompt prefixes of 1024+ tokens in 128-token steps; the fake mimics that from
# a 4-characters-per-token estimate so benchmarks can see cache hits.
_CHARS_PER_TOKEN = 4
_CACHE_MIN_TOKENS = 1024
_CACHE_STEP_TOKENS = 128

_completion_ids = itertools.count(1)


class ChatCompletions:
    """Part of `FakeOpenAI`, which sets the attributes declared here."""

    default: DefaultResponse | None
    invalid_requests: list[str]
    _script: deque[Response]
    _requests: list[dict[str, Any]]
    _headers: list[dict[str, str]]
    _holds: list[Hold]
    _cond: threading.Condition
    models: frozenset[str] | None
    streaming: StreamSettings
    server: ServerRefusals

    def _chat_routes(self) -> list[web.RouteDef]:
        return [web.post("/v1/chat/completions", self._handle_chat)]

    async def _handle_chat(self, request: web.Request) -> web.StreamResponse:
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
        if (too_many := too_many_tools(body)) is not None:
            self.invalid_requests.append(too_many.message)
            return _error_response(too_many)
        with self._cond:
            self._requests.append(body)
            self._headers.append(dict(request.headers))
            if self.models is not None and body["model"] not in self.models:
                self._cond.notify_all()
                return _error_response(model_not_found(body["model"]))
            if (refusal := self.server.refusal(body)) is not None:
                self._cond.notify_all()
                return refusal
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
        if isinstance(response, Trickled):
            whole = _completion(response.response, body, previous, self.server)
            return await trickle(request, json.dumps(whole).encode(), response)
        style = self.streaming.style
        if isinstance(response, Streamed):
            style, response = response.style, response.response
        # What is left is a Completion: `_handle_chat` drops a Disconnect (one inside a hold or
        # a delay is not supported, and fails here as it did in `_completion`).
        assert isinstance(response, Completion)
        response, left = self.server.answer(response, body)
        if left is not None:
            with self._cond:
                self._script.appendleft(left)
        completion = _completion(response, body, previous, self.server)
        if body.get("stream") and self.streaming.mode == "sse":
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return await stream_completion(request, completion, style, usage)
        return web.json_response(completion)

    def _default_for(self, body: dict[str, Any]) -> Response | None:
        default = self.default
        return default(body) if callable(default) else default


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


MAX_TOOLS = 128  # OpenAI's Chat Completions: functions in one request's `tools`


def too_many_tools(body: dict[str, Any]) -> Error | None:
    """OpenAI's answer to a request with more than MAX_TOOLS tools."""
    tools = body.get("tools")
    if not isinstance(tools, list) or len(tools) <= MAX_TOOLS:
        return None
    message = (
        f"Invalid 'tools': array too long. Expected an array with maximum length {MAX_TOOLS}, "
        f"but got an array with length {len(tools)} instead."
    )
    return Error(400, message, "invalid_request_error", "array_above_max_length", param="tools")


def _completion(
    response: Completion,
    body: dict[str, Any],
    previous: list[dict[str, Any]],
    server: ServerRefusals | None = None,
) -> dict[str, Any]:
    prompt = _prompt_text(body)
    # As the server it plays counts them (by default, 4 characters a token).
    prompt_tokens = (server or ServerRefusals()).prompt_tokens(body)
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
        "model": (server.answers_as if server else None) or body.get("model", "fake-model"),
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


def model_not_found(model: str) -> Error:
    """OpenAI's answer for a model that does not exist, or that the key may not use."""
    message = f"The model `{model}` does not exist or you do not have access to it."
    return Error(404, message, "invalid_request_error", "model_not_found")


def _error_response(err: Error) -> web.Response:
    error = {"message": err.message, "type": err.type, "param": err.param, "code": err.code}
    body = {"error": error}
    return web.json_response(body, status=err.status, headers=err.headers)
