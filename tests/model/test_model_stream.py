"""Reading a streamed answer (assistant/model/stream.py): the tool calls as OpenAI and vLLM send
them (in pieces), as llama.cpp and Ollama send them (whole), and as servers that leave the
index out do; a chunk of another shape is the model service's error."""

from __future__ import annotations

import json

import pytest

from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.chat import _completion
from assistant.fakes.openai.stream import StreamStyle, chunks
from assistant.model.completion import NotACompletion
from assistant.model.stream import (
    CallArguments,
    CallEnded,
    CallStarted,
    ReplyAssembler,
    ReplyEnded,
    StepEvent,
)

POST = {"text": 'Hello, 😀 "world"', "reasoning": "greet"}
CALLS = replies.tool_calls(("postMessage", POST), ("finishRequest", {"reasoning": "done"}))
BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}


def read(pieces: list[dict]) -> list[StepEvent]:
    assembler = ReplyAssembler()
    events: list[StepEvent] = []
    for piece in pieces:
        events += assembler.feed([piece])
    assert assembler.finished
    return events + assembler.end(12.5)


def fake_chunks(style: StreamStyle, usage: bool = True) -> list[dict]:
    found = []
    for chunk in chunks(_completion(CALLS, BODY, []), style, usage):
        chunk.pop("token", None)
        found.append(json.loads(json.dumps(chunk)))
    return found


def summary(events: list[StepEvent]) -> list[tuple]:
    """The events, arguments pieces joined per call."""
    out: list[tuple] = []
    for event in events:
        if isinstance(event, CallArguments) and out and out[-1][0] == "args":
            out[-1] = ("args", event.index, out[-1][2] + event.piece)
        elif isinstance(event, CallArguments):
            out.append(("args", event.index, event.piece))
        elif isinstance(event, CallStarted):
            out.append(("start", event.index, event.name))
        elif isinstance(event, CallEnded):
            out.append(("end", event.index, event.name, json.loads(event.arguments)))
    return out


EXPECTED = [
    ("start", 0, "postMessage"),
    ("args", 0, json.dumps(POST, ensure_ascii=False)),
    ("end", 0, "postMessage", POST),
    ("start", 1, "finishRequest"),
    ("args", 1, '{"reasoning": "done"}'),
    ("end", 1, "finishRequest", {"reasoning": "done"}),
]


@pytest.mark.parametrize("whole", [False, True], ids=["in pieces", "whole calls"])
def test_calls_start_grow_and_end_in_order(whole):
    events = read(fake_chunks(StreamStyle(whole_calls=whole)))
    assert summary(events) == EXPECTED
    if not whole:
        assert sum(isinstance(e, CallArguments) and e.index == 0 for e in events) > 5
    reply = events[-1]
    assert isinstance(reply, ReplyEnded)
    assert [(c.name, json.loads(c.arguments)) for c in reply.reply.calls] == [
        ("postMessage", POST),
        ("finishRequest", {"reasoning": "done"}),
    ]
    assert reply.reply.model == "gpt-4o-mini"
    assert reply.reply.prompt_tokens and reply.reply.completion_tokens
    assert reply.reply.latency_ms == 12.5


def test_a_call_ends_as_soon_as_the_next_one_starts():
    assembler = ReplyAssembler()
    pieces = fake_chunks(StreamStyle())
    seen: list[StepEvent] = []
    for piece in pieces:
        seen += assembler.feed([piece])
        if any(isinstance(e, CallStarted) and e.index == 1 for e in seen):
            break
    ends = [e for e in seen if isinstance(e, CallEnded)]
    assert [e.index for e in ends] == [0]
    assert seen.index(ends[0]) < len(seen) - 1  # before the second call's start


def test_calls_without_an_index_are_told_apart_by_their_ids():
    def delta(call: dict, finish: str | None = None) -> dict:
        return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": finish}]}

    pieces = [
        delta({"id": "a", "function": {"name": "postMessage", "arguments": '{"text": "x",'}}),
        delta({"function": {"arguments": ' "reasoning": "r"}'}}),
        delta({"id": "b", "function": {"name": "finishRequest", "arguments": "{}"}}),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    events = read(pieces)
    assert [(e.index, e.name) for e in events if isinstance(e, CallEnded)] == [
        (0, "postMessage"),
        (1, "finishRequest"),
    ]


def test_plain_text_is_kept_for_the_reply():
    events = read(
        [
            {"choices": [{"index": 0, "delta": {"content": "Hel"}}]},
            {"choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]},
        ]
    )
    (reply,) = events
    assert isinstance(reply, ReplyEnded) and reply.reply.text == "Hello" and not reply.reply.calls


@pytest.mark.parametrize(
    "chunk",
    [
        {"choices": "no"},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "x"}]}}]},
        {"choices": [{"index": 0, "delta": {"content": ["a", "list"]}}]},
    ],
)
def test_a_chunk_of_another_shape_is_not_a_completion(chunk):
    with pytest.raises(NotACompletion, match="stream chunk"):
        ReplyAssembler().feed([chunk])


def test_a_stream_going_back_to_an_ended_call_is_not_a_completion():
    assembler = ReplyAssembler()
    for index, name in enumerate(["postMessage", "finishRequest"]):
        call = {"index": index, "id": name, "function": {"name": name, "arguments": "{}"}}
        assembler.feed([{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}])
    back = {"index": 0, "function": {"arguments": "{}"}}
    with pytest.raises(NotACompletion, match="went back"):
        assembler.feed([{"choices": [{"index": 0, "delta": {"tool_calls": [back]}}]}])


def test_a_read_of_many_chunks_gives_each_call_its_arguments_in_one_piece():
    pieces = fake_chunks(StreamStyle())
    events = ReplyAssembler().feed(pieces)
    assert [e.index for e in events if isinstance(e, CallArguments)] == [0, 1]
    assert summary(events) == summary(read(pieces))
