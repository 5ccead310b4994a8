"""A `chat {model}` span per model call (kind CLIENT, a child of the run's `invoke_agent`
span), and the conventions' two client histograms, `gen_ai.client.operation.duration` and
`gen_ai.client.token.usage`. Attributes are set once, when the call ends: the reply's figures
are all known then."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from assistant.model.attempts import ModelError
from assistant.model.completion import ModelReply
from assistant.telemetry import genai


def error_type(error: BaseException) -> str:
    """`error.type`: the model error's kind (an HTTP status, "timeout", …), else the class."""
    return error.kind if isinstance(error, ModelError) else type(error).__qualname__


class ChatWatch:
    """One model call's span and figures (`assistant.model.observer.CallWatch`)."""

    def __init__(
        self,
        span: Span,
        metrics: Any,  # assistant.telemetry.runs.Instruments
        request: dict[str, Any],
        capture: bool,
        on_call: Callable[[str, str | None], None],
    ) -> None:
        self._span = span
        self._metrics = metrics
        self._request = request  # the metrics' attributes: operation, provider, request model
        self._capture = capture
        self._on_call = on_call  # the run's: a tool call's id, for its execute_tool span
        self._started = time.perf_counter()
        self._first: float | None = None
        self._over = False

    def first_chunk(self) -> None:
        if self._first is None:
            self._first = time.perf_counter() - self._started

    def call_ended(self, name: str, call_id: str | None) -> None:
        self.first_chunk()
        self._on_call(name, call_id)

    def ended(self, reply: ModelReply) -> None:
        if self._over:
            return
        self._over = True
        attributes: dict[str, Any] = {genai.FINISH_REASONS: [reply.finish_reason or "unknown"]}
        if reply.response_id:
            attributes[genai.RESPONSE_ID] = reply.response_id
        if reply.model:
            attributes[genai.RESPONSE_MODEL] = reply.model
        usage = {
            genai.INPUT_TOKENS: reply.prompt_tokens,
            genai.OUTPUT_TOKENS: reply.completion_tokens,
            genai.CACHED_INPUT_TOKENS: reply.cached_tokens,
        }
        attributes.update({name: value for name, value in usage.items() if value is not None})
        if self._first is not None:
            attributes[genai.FIRST_CHUNK] = self._first
        if self._capture:
            calls = [(call.id, call.name, call.arguments) for call in reply.calls]
            attributes[genai.OUTPUT_MESSAGES] = genai.output_messages(
                calls, reply.text, reply.finish_reason
            )
        if self._first is None:  # a whole answer: its calls' ids now
            for call in reply.calls:
                self._on_call(call.name, call.id)
        self._span.set_attributes(attributes)
        self._span.end()
        measured = {**self._request}
        if reply.model:
            measured[genai.RESPONSE_MODEL] = reply.model
        self._metrics.duration.record(time.perf_counter() - self._started, measured)
        for kind, count in (("input", reply.prompt_tokens), ("output", reply.completion_tokens)):
            if count is not None:
                self._metrics.tokens.record(count, {**measured, genai.TOKEN_TYPE: kind})

    def failed(self, error: BaseException) -> None:
        if self._over:
            return
        self._over = True
        kind = error_type(error)
        self._span.set_attribute(genai.ERROR_TYPE, kind)
        self._span.set_status(Status(StatusCode.ERROR, str(error)))
        self._span.end()
        measured = {**self._request, genai.ERROR_TYPE: kind}
        self._metrics.duration.record(time.perf_counter() - self._started, measured)


def chat_span_attributes(
    model: str, max_tokens: int | None, streamed: bool, conversation: str | None
) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        genai.OPERATION: "chat",
        genai.PROVIDER: genai.PROVIDER_OPENAI,
        genai.REQUEST_MODEL: model,
        genai.REQUEST_STREAM: streamed,
    }
    if max_tokens is not None:
        attributes[genai.REQUEST_MAX_TOKENS] = max_tokens
    if conversation is not None:
        attributes[genai.CONVERSATION] = conversation
    return attributes


def chat_name(model: str) -> str:
    return f"chat {model}"


SPAN_KIND = SpanKind.CLIENT
