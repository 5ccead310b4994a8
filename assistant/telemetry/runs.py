"""The spans of a run, from the few places that see everything: the scheduler's run function
(an `invoke_agent` span per run, linked to the spans that recorded the events it answers),
the model client's watcher (`calls.py`) and the recorder's observer (an `execute_tool` span
from each tool call's entry to its result), plus feedback clicks and stops.

Per run, one `_Run` in a context variable: the recorder, the model client and the tools are
called in the run's task (or tasks it made), so they find it without being passed it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

from opentelemetry.context import Context
from opentelemetry.trace import (
    Link,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    get_current_span,
    set_span_in_context,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from assistant.model.observer import CallWatch
from assistant.run.core.recorder import Recording
from assistant.run.core.requests import AnswerRequest
from assistant.run.judging.live import Verdict
from assistant.run.scheduling.scheduler import RunFunction, StopFunction
from assistant.slack.connection import slack_error_type
from assistant.telemetry import genai
from assistant.telemetry.calls import SPAN_KIND, ChatWatch, chat_name, chat_span_attributes
from assistant.telemetry.metrics import Instruments
from assistant.telemetry.setup import Providers
from context.entry import BUDGET_PREFIX, FAILURE_PREFIX, Content, Entry, UserContent
from context.storage import EntryMeta, StopRequest, Store, ThreadKey
from context.storage.async_store import async_store
from context.toolcalls import FinishRequest, ToolCall

_PROPAGATOR = TraceContextTextMapPropagator()


def traceparent(span: Span) -> str | None:
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=set_span_in_context(span))
    return carrier.get("traceparent")


def context_of(value: str | None) -> Context | None:
    return _PROPAGATOR.extract({"traceparent": value}) if value else None


@dataclass
class _Run:
    span: Span
    key: ThreadKey
    steps: int = 0
    outcome: str = "interrupted"  # until an entry says how it ended
    tool: Span | None = None
    tool_index: int | None = None
    call_ids: deque[tuple[str, str | None]] = field(default_factory=deque)

    def end_tool(self) -> None:
        if self.tool is not None:
            self.tool.end()
            self.tool, self.tool_index = None, None

    def call_id(self, name: str) -> str | None:
        """The model's id of the call named `name` about to be recorded (calls that could
        not be parsed are skipped)."""
        while self.call_ids:
            queued, call_id = self.call_ids.popleft()
            if queued == name:
                return call_id
        return None


_RUN: ContextVar[_Run | None] = ContextVar("telemetry_run", default=None)


@dataclass
class _Noted:
    """A `Recording`: the meta to write, and what to do once the entry is written."""

    meta: EntryMeta | None
    span: Span | None = None
    run: _Run | None = None

    def done(self, entry: Entry | None) -> None:
        if self.span is None or entry is None:
            return
        self.span.set_attribute(genai.ENTRY_INDEX, entry.index)
        if self.run is not None:
            self.run.tool_index = entry.index
        else:  # the event's span ends with its write
            self.span.end()


_NOTHING = _Noted(None)


class Telemetry:
    """The app's spans and metrics, on its own providers (`setup.open_providers`)."""

    def __init__(self, providers: Providers, agent_name: str, store: Store, capture: bool) -> None:
        self.providers = providers
        self.tracer = providers.tracer_provider.get_tracer("assistant", schema_url=genai.SCHEMA_URL)
        self.metrics = Instruments(providers)
        self._agent = agent_name
        self._store = store
        self._capture = capture

    # The run: the scheduler's run and stop functions, wrapped.

    def runs(self, run: RunFunction) -> RunFunction:
        async def traced(key: ThreadKey, requests: list[AnswerRequest]) -> None:
            links = [
                Link(span_context)
                for request in requests
                if (found := context_of(request.trace_context)) is not None
                and (span_context := _span_context(found)) is not None
            ]
            span = self.tracer.start_span(
                f"invoke_agent {self._agent}",
                kind=SpanKind.INTERNAL,
                links=links,
                attributes={
                    genai.OPERATION: "invoke_agent",
                    genai.PROVIDER: genai.PROVIDER_OPENAI,
                    genai.AGENT_NAME: self._agent,
                    genai.CONVERSATION: str(key),
                },
            )
            routines = sorted({r.routine for r in requests if r.routine is not None})
            if routines:
                span.set_attribute(genai.ROUTINE, routines[0])
            state = _Run(span, key)
            token = _RUN.set(state)
            try:
                await run(key, requests)
            except BaseException as exc:
                cancelled = isinstance(exc, asyncio.CancelledError)
                state.outcome = "cancelled" if cancelled else "deferred"
                raise
            finally:
                _RUN.reset(token)
                state.end_tool()
                span.set_attributes({genai.STEPS: state.steps, genai.OUTCOME: state.outcome})
                if state.outcome == "error":
                    span.set_status(Status(StatusCode.ERROR))
                span.end()
                self.metrics.runs.add(1, {genai.OUTCOME: state.outcome})

        return traced

    def stops(self, stopped: StopFunction) -> StopFunction:
        async def counted(key: ThreadKey, stop: StopRequest, shown: list[tuple[str, str]]) -> None:
            await stopped(key, stop, shown)
            self.metrics.stops.add(1)

        return counted

    # The model client's watcher (assistant.model.observer.CallWatcher).

    def call(
        self, model: str, max_tokens: int | None, streamed: bool, prompt_text: str
    ) -> CallWatch:
        run = _RUN.get()
        parent = None
        if run is not None:
            run.end_tool()  # a tool that posted ends when the model is asked again
            run.steps += 1
            parent = set_span_in_context(run.span)
        conversation = str(run.key) if run is not None else None
        attributes = chat_span_attributes(model, max_tokens, streamed, conversation)
        if self._capture:
            attributes[genai.INPUT_MESSAGES] = genai.input_messages(prompt_text)
        span = self.tracer.start_span(
            chat_name(model), context=parent, kind=SPAN_KIND, attributes=attributes
        )
        request = {key: attributes[key] for key in (genai.OPERATION, genai.PROVIDER)}
        request[genai.REQUEST_MODEL] = model

        def on_call(name: str, call_id: str | None) -> None:
            if run is not None:
                run.call_ids.append((name, call_id))

        return ChatWatch(span, self.metrics, request, self._capture, on_call)

    # The recorder's observer (assistant.run.core.recorder.EntryObserver).

    def recording(self, key: ThreadKey, content: Content, meta: EntryMeta | None) -> Recording:
        run = _RUN.get()
        if run is None:
            if not isinstance(content, UserContent) or meta is None or not meta.wants_answer:
                return _NOTHING
            # An event owed an answer: the span of its write, which the run will link to.
            span = self.tracer.start_span(
                "record message",
                kind=SpanKind.INTERNAL,
                attributes={genai.CONVERSATION: str(key), genai.SLACK_TS: meta.slack_ts or ""},
            )
            return _Noted(_stamped(meta, span), span)
        if isinstance(content, ToolCall):
            run.end_tool()
            if isinstance(content, FinishRequest):
                run.outcome = "finished"
            attributes: dict[str, Any] = {
                genai.OPERATION: "execute_tool",
                genai.TOOL_NAME: content.called,
                genai.TOOL_TYPE: "function",
            }
            if (call_id := run.call_id(content.called)) is not None:
                attributes[genai.TOOL_CALL_ID] = call_id
            if self._capture:
                arguments = content.model_dump_json()
                attributes[genai.TOOL_ARGUMENTS] = genai.printable(arguments)
            run.tool = self.tracer.start_span(
                f"execute_tool {content.called}",
                context=set_span_in_context(run.span),
                kind=SpanKind.INTERNAL,
                attributes=attributes,
            )
            return _Noted(_stamped(meta, run.tool), run.tool, run)
        if isinstance(content, str) and content.startswith(BUDGET_PREFIX):
            # No model call was made: the run's span says why (docs/operations.md#spend-limits).
            run.outcome = "budget_reached"
            run.span.add_event("assistant.budget_reached", {"assistant.budget.note": content[:500]})
        elif isinstance(content, str) and content.startswith(FAILURE_PREFIX):
            run.outcome = "error"
            if run.tool is not None:
                failure = content.removeprefix(FAILURE_PREFIX)
                # error.type: "the error code", Slack's where the failure is Slack's.
                error = slack_error_type(failure) or "tool_error"
                failed = {genai.ERROR_TYPE: error, genai.SLACK_ERROR: failure}
                run.tool.set_attributes(failed)
                run.tool.set_status(Status(StatusCode.ERROR))
        elif isinstance(content, str) and run.tool is not None and self._capture:
            run.tool.set_attribute(genai.TOOL_RESULT, genai.printable(content))
        run.end_tool()
        return _NOTHING

    def posted(self, key: ThreadKey, index: int, ts: str) -> None:
        self.metrics.posts.add(1)
        run = _RUN.get()
        if run is not None and run.tool is not None and run.tool_index == index:
            run.tool.set_attribute(genai.SLACK_TS, ts)

    async def voted(self, key: ThreadKey, index: int, vote: str) -> None:
        """A span in the answer's trace: a child of its postMessage's execute_tool span."""
        found = await async_store(self._store).read(self._store.trace_context, key, index)
        parent = context_of(found)
        span = self.tracer.start_span(
            "feedback",
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes={
                genai.CONVERSATION: str(key),
                genai.ENTRY_INDEX: index,
                "assistant.feedback.vote": vote,
            },
        )
        span.end()

    def judged(self, verdict: Verdict) -> None:
        """A live judge's verdict (ASSISTANT_JUDGE_SAMPLE): a span in the answer's trace (a
        child of its postMessage's execute_tool span), with the semantic conventions'
        `gen_ai.evaluation.result` event; the judge's reason only when message content is
        captured (it may quote the answer)."""
        span = self.tracer.start_span(
            "evaluate answer",
            context=context_of(verdict.trace_context),
            kind=SpanKind.INTERNAL,
            attributes={
                genai.CONVERSATION: str(verdict.key),
                genai.ENTRY_INDEX: verdict.answer,
                genai.REQUEST_MODEL: verdict.judge_model,
            },
        )
        event: dict[str, Any] = {
            genai.EVALUATION_NAME: genai.EVALUATION_ANSWER,
            genai.EVALUATION_LABEL: verdict.verdict or "none",
            genai.REQUEST_MODEL: verdict.judge_model,
        }
        if verdict.model is not None:
            event[genai.RESPONSE_MODEL] = verdict.model
        if verdict.verdict is None:
            event[genai.ERROR_TYPE] = "judge_failed"
            span.set_status(Status(StatusCode.ERROR))
        if self._capture:
            event[genai.EVALUATION_EXPLANATION] = genai.printable(verdict.reason)
        span.add_event(genai.EVALUATION_EVENT, event)
        span.end()


def _stamped(meta: EntryMeta | None, span: Span) -> EntryMeta:
    """`meta` with the span's trace context, to be written with the entry."""
    return replace(meta or EntryMeta(), trace_context=traceparent(span))


def _span_context(context: Context) -> SpanContext | None:
    span_context = get_current_span(context).get_span_context()
    return span_context if span_context.is_valid else None
