"""The constrained mode (assistant/model/json_mode.py): its answer read as the tool call it is
while it streams, and the tools described in its system message (issues 43 and 49)."""

from __future__ import annotations

import json

from assistant.model.completion import ModelReply
from assistant.model.instructions import SYSTEM_MESSAGE
from assistant.model.json_mode import JsonCallStream, calls_from_json, json_instructions
from assistant.model.stream import CallArguments, CallEnded, CallStarted, ReplyEnded, StepEvent
from assistant.model.tool_calls import SEARCH_SCHEMA, TOOL_SCHEMAS, server_function_schema
from assistant.run.core.prompt import MESSAGE_FRAMING_TOKENS, PromptBudget, fixed_tokens
from context.tokens import counter_for


def chunk(content: str | None = None, finish: str | None = None) -> dict:
    delta = {"content": content} if content is not None else {}
    return {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta,
                                                   "finish_reason": finish}]}  # fmt: skip


def streamed(pieces: list[str]) -> list[StepEvent]:
    stream = JsonCallStream()
    events: list[StepEvent] = []
    for piece in pieces:
        events += stream.feed([chunk(piece)])
    events += stream.feed([chunk(finish="stop")])
    assert stream.finished
    return events + stream.end(12.0)


def test_a_streamed_call_starts_once_its_tool_is_named_and_ends_read_whole():
    text = '{"toolCall": "postMessage", "text": "Hi \\u00e9", "reasoning": "greet"}'
    pieces = [
        '{"tool',
        'Call": "post',
        'Message"',
        ', "text": "Hi ',
        '\\u00e9", "reasoning": "greet"}',
    ]
    events = streamed(pieces)
    assert events[:2] == [
        CallStarted(0, "postMessage"),
        CallArguments(0, '{"toolCall": "postMessage"'),
    ]
    assert "".join(e.piece for e in events if isinstance(e, CallArguments)) == text
    ended, reply = events[-2:]
    assert ended == CallEnded(0, "postMessage", json.dumps({"text": "Hi é", "reasoning": "greet"},
                                                           ensure_ascii=False))  # fmt: skip
    assert isinstance(reply, ReplyEnded) and reply.reply.latency_ms == 12.0
    assert reply.reply.calls[0].name == "postMessage" and reply.reply.text is None


def test_a_streamed_call_cut_short_ends_as_the_broken_call_it_is():
    events = streamed(['{"toolCall": "postMessage", "text": "cut sh'])
    assert events[0] == CallStarted(0, "postMessage")
    assert events[-2] == CallEnded(0, "postMessage", '{"toolCall": "postMessage", "text": "cut sh')


def test_streamed_plain_text_comes_whole_at_the_end():
    events = streamed(["Hello ", "there."])
    assert len(events) == 1 and isinstance(events[0], ReplyEnded)
    assert events[0].reply.text == "Hello there." and events[0].reply.calls == []


def test_a_tool_named_twice_is_the_first_one_shown_and_broken():
    """json.loads keeps the last `toolCall`; the stream showed the first: never two names."""
    text = '{"toolCall": "postMessage", "text": "x", "toolCall": "finishRequest"}'
    reply = calls_from_json(ModelReply(calls=[], text=text))
    assert [(c.name, c.arguments) for c in reply.calls] == [("postMessage", text)]
    events = streamed([text])
    assert events[0] == CallStarted(0, "postMessage")
    assert events[-2] == CallEnded(0, "postMessage", text)


def test_the_system_message_describes_every_tool_and_its_arguments():
    """Issue 49: in this mode the request has no `tools`: what each does is in the system
    message, an MCP tool's description and its arguments' among them."""
    weather = server_function_schema(
        "weather__forecast",
        "The forecast for a city,\n  three days ahead.",
        {"type": "object", "properties": {"city": {"type": "string", "description": "Its name."},
                                          "days": {"type": "integer"}},
         "required": ["city"]},
    )  # fmt: skip
    said = json_instructions("Be brief.", [*TOOL_SCHEMAS, SEARCH_SCHEMA, weather])
    lines = said.splitlines()
    assert lines[0] == "Be brief."
    assert (
        "- weather__forecast: The forecast for a city, three days ahead. Arguments: "
        "city (string): Its name. days (integer, optional)"
    ) in lines
    assert (
        "- postMessage: Post a reply in the thread (Markdown, converted for Slack). Arguments: "
        "text (string): The message to post, in Markdown."
    ) in lines
    assert any(line.startswith("- getThreadHistory: Read the thread's Slack messages") and
               "limit (integer, optional): At most this many messages" in line
               for line in lines)  # fmt: skip
    assert any(
        line.startswith("- searchSlack: Search Slack's messages as the person who asked")
        for line in lines
    )
    assert "- finishRequest: End the work on the current request" in said


def test_the_descriptions_fit_what_the_budget_counts_for_the_tools():
    """The constrained system message is no longer than what the budget keeps for the
    instructions and the tools, for the built-ins and for a server's tools beside them."""
    counter = counter_for("gpt-4o")
    weather = server_function_schema(
        "weather__forecast", "The forecast " * 200,
        {"type": "object", "properties": {"city": {"type": "string",
                                                   "description": "A city " * 100}}},
    )  # fmt: skip
    fixed = fixed_tokens(counter)
    system = json_instructions(SYSTEM_MESSAGE, TOOL_SCHEMAS)
    assert counter.count(system) + MESSAGE_FRAMING_TOKENS <= fixed
    budget = PromptBudget(10_000, counter, 500, fixed).with_tools([weather])
    system = json_instructions(SYSTEM_MESSAGE, [*TOOL_SCHEMAS, weather])
    assert counter.count(system) + MESSAGE_FRAMING_TOKENS <= budget.fixed
