"""A streamed chat completion read as it arrives: which tool call starts, the pieces of its
arguments, when it is complete, and at the end the whole reply with its usage. Pure: fed the
chunks' JSON, no I/O.

OpenAI, vLLM and llama.cpp (since its server streams tool calls, mid-2025) send a call's id
and name in its first delta and its arguments in pieces; Ollama, and llama.cpp before that,
send each call whole in one chunk. A call is complete when a delta of a
later call arrives or the answer finishes. Only what is read is checked (as for whole answers,
`assistant.model.completion`): a chunk of another shape is an error of the model service.

Fed a read of the stream at a time (`assistant.model.sse`): its chunks checked at once, and
the argument pieces of one call in them handed on as one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import groupby
from typing import Any

from pydantic import TypeAdapter, ValidationError
from typing_extensions import TypedDict  # pydantic reads only this one before 3.12

from assistant.model.completion import ModelReply, NotACompletion, RawToolCall, Usage


# The chunk's shape, checked (pydantic) into plain dicts: a model object for each part of each
# chunk was most of a streamed answer's CPU, a chunk a token.
class FunctionDelta(TypedDict, total=False):
    name: str | None
    arguments: str | None


class ToolCallDelta(TypedDict, total=False):
    index: int | None  # some servers leave it out: then a new id is a new call
    id: str | None
    function: FunctionDelta | None


class Delta(TypedDict, total=False):
    content: str | None
    tool_calls: list[ToolCallDelta] | None


class ChunkChoice(TypedDict, total=False):
    index: int
    delta: Delta | None
    finish_reason: str | None


class Chunk(TypedDict, total=False):
    id: str | None
    choices: list[ChunkChoice] | None
    model: str | None
    usage: Usage | None
    error: object  # the service's error, sent as a chunk (`assistant.model.sse`)


@dataclass(frozen=True)
class CallStarted:
    index: int
    name: str


@dataclass(frozen=True)
class CallArguments:
    index: int
    piece: str


@dataclass(frozen=True)
class CallEnded:
    index: int
    name: str
    arguments: str
    id: str | None = None


@dataclass(frozen=True)
class TimedOut:
    """Before the answer's first event: `attempts` attempts of the call were cut by the
    client's timeout of `seconds` (OPENAI_TIMEOUT) and it was asked again."""

    attempts: int
    seconds: float


@dataclass(frozen=True)
class ReplyEnded:
    """The answer is complete: all of it, with its usage."""

    reply: ModelReply


StepEvent = CallStarted | CallArguments | CallEnded | ReplyEnded | TimedOut


@dataclass
class _Call:
    id: str | None
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    started: bool = False


class ReplyAssembler:
    """Turns the chunks of one streamed answer into `StepEvent`s, in order."""

    def __init__(self) -> None:
        self._calls: list[_Call] = []
        self._text: list[str] = []
        self._taken = 0  # the text pieces `take_text` handed on
        self._model: str | None = None
        self._usage: Usage | None = None
        self._id: str | None = None
        self._finish: str | None = None
        self._ended = 0  # calls before this one are complete (CallEnded sent)
        self.finished = False  # a finish_reason came

    def feed(self, data: list[object], checked: bool = False) -> list[StepEvent]:
        """Chunks, as JSON (those of one read of the stream): their events, the pieces of
        one call's arguments that follow each other in one event. `checked`: the chunks
        came from `parse_chunks` (else their shape is checked here)."""
        # `checked` says what mypy cannot see: parse_chunks made these Chunks already.
        chunks: list[Chunk] = data if checked else _checked(_CHUNKS.validate_python, data)  # type: ignore[assignment]
        events: list[StepEvent] = []
        for chunk in chunks:
            self._model = chunk.get("model") or self._model
            self._usage = chunk.get("usage") or self._usage
            self._id = self._id or chunk.get("id")
            for choice in chunk.get("choices") or []:
                if choice.get("index", 0) != 0:
                    continue  # only the first choice is read, as for whole answers
                delta = choice.get("delta") or {}
                if content := delta.get("content"):
                    self._text.append(content)
                for part in delta.get("tool_calls") or []:
                    events += self._call_delta(part)
                if (finish := choice.get("finish_reason")) is not None:
                    self.finished = True
                    self._finish = finish
                    events += self._end_calls(len(self._calls))
        return _joined(events)

    def take_text(self) -> str:
        """The answer's text that arrived since the last call (the constrained mode reads
        its JSON as it comes: `assistant.model.json_mode.JsonCallStream`)."""
        pieces = self._text[self._taken :]
        self._taken = len(self._text)
        return "".join(pieces)

    def end(self, latency_ms: float = 0.0) -> list[StepEvent]:
        """The stream is over: the last calls are complete, and the reply with them."""
        events = self._end_calls(len(self._calls))
        usage = self._usage
        details = usage.prompt_tokens_details if usage else None
        reply = ModelReply(
            calls=[RawToolCall(c.name, "".join(c.arguments), c.id) for c in self._calls],
            text="".join(self._text) or None,
            model=self._model,
            prompt_tokens=usage.prompt_tokens if usage else None,
            cached_tokens=details.cached_tokens if details else None,
            completion_tokens=usage.completion_tokens if usage else None,
            latency_ms=latency_ms,
            response_id=self._id,
            finish_reason=self._finish,
        )
        return [*events, ReplyEnded(reply)]

    def _call_delta(self, part: ToolCallDelta) -> list[StepEvent]:
        index, id_ = part.get("index"), part.get("id")
        if index is None:  # no index: the same call unless a new id says otherwise
            last = self._calls[-1] if self._calls else None
            new = last is None or (id_ is not None and id_ != last.id)
            index = len(self._calls) if new else len(self._calls) - 1
        if index < self._ended:
            raise NotACompletion(f"a stream that went back to tool call {index} after a later one")
        events: list[StepEvent] = self._end_calls(index)
        while len(self._calls) <= index:
            self._calls.append(_Call(id_))
        call = self._calls[index]
        function = part.get("function") or {}
        name, arguments = function.get("name"), function.get("arguments")
        if name and not call.name:
            call.name = name
        if arguments:
            call.arguments.append(arguments)
        if call.name and not call.started:
            call.started = True
            events.append(CallStarted(index, call.name))
            if call.arguments:
                events.append(CallArguments(index, "".join(call.arguments)))
        elif call.started and arguments:
            events.append(CallArguments(index, arguments))
        return events

    def _end_calls(self, before: int) -> list[StepEvent]:
        """CallEnded for every call before `before` not ended yet."""
        events: list[StepEvent] = []
        while self._ended < min(before, len(self._calls)):
            call = self._calls[self._ended]
            if not call.started:  # a call that never got a name: its arguments come now
                events.append(CallStarted(self._ended, call.name))
                call.started = True
            events.append(CallEnded(self._ended, call.name, "".join(call.arguments), call.id))
            self._ended += 1
        return events


_CHUNKS = TypeAdapter(list[Chunk])


def parse_chunks(array: bytes) -> list[Chunk]:
    """A JSON array of chunks (a read's, `assistant.model.sse`), parsed and checked in one
    pass by pydantic's own JSON parser: a third less CPU a chunk than `json.loads` and a
    check of the objects it made. NotACompletion for JSON of another shape, or none."""
    return _checked(_CHUNKS.validate_json, array)


def _checked(validate: Callable[[Any], list[Chunk]], data: Any) -> list[Chunk]:
    try:
        return validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"][1:]) or "the chunk"
        what = f"a stream chunk of another shape ({where}: {first['msg']})"
        raise NotACompletion(what) from None


def _joined(events: list[StepEvent]) -> list[StepEvent]:
    """`events`, the arguments pieces of one call that follow each other as one piece: the
    run reads each event, and a read of the stream holds many chunks of one call."""
    joined: list[StepEvent] = []
    for index, group in groupby(events, _arguments_of):
        if index is None:
            joined += group
        else:
            pieces = [e.piece for e in group if isinstance(e, CallArguments)]
            joined.append(CallArguments(index, "".join(pieces)))
    return joined


def _arguments_of(event: StepEvent) -> int | None:
    return event.index if isinstance(event, CallArguments) else None


def whole_events(reply: ModelReply) -> list[StepEvent]:
    """The events of an answer that came whole (a server that does not stream); the
    attempts the timeout cut before it, first (and no more in its reply: said once)."""
    events: list[StepEvent] = []
    if reply.timeouts:
        events.append(TimedOut(reply.timeouts, reply.timeout))
        reply = replace(reply, timeouts=0)
    for index, call in enumerate(reply.calls):
        events += [
            CallStarted(index, call.name),
            CallArguments(index, call.arguments),
            CallEnded(index, call.name, call.arguments, call.id),
        ]
    return [*events, ReplyEnded(reply)]
