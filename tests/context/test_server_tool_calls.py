"""A call of an MCP server's tool in the log: `{toolCall: SERVER__TOOL, <arguments>, reasoning}`
validated, written canonically, accepted by the JSON Schema, printed with 🔧."""

from __future__ import annotations

import json

import jsonschema

from context.entry import ENTRY_ADAPTER
from context.render import render_entry
from context.schema import log_json_schema
from context.validate import validate_log

CALL = {
    "index": 2,
    "turn": 1,
    "timestamp": "2025-04-04T12:33:00Z",
    "role": "assistant",
    "content": {"reasoning": "look", "toolCall": "shop__lookup_order", "order": "A1", "x": None},
}


def log_with(content: dict) -> list[dict]:
    return [
        {"index": 0, "turn": 0, "timestamp": "2025-04-04T12:32:00Z", "role": "system",
         "content": "persona"},
        {"index": 1, "turn": 0, "timestamp": "2025-04-04T12:32:00Z", "role": "user",
         "content": {"userid": "<@U1>", "text": "where is A1?"}},
        {**CALL, "content": content},
    ]  # fmt: skip


def test_a_server_tool_call_is_written_tool_first_arguments_as_given_reasoning_last():
    entry = ENTRY_ADAPTER.validate_python(CALL)
    assert json.loads(entry.canonical_json())["content"] == CALL["content"]
    assert entry.canonical_json().endswith(
        '"content":{"toolCall":"shop__lookup_order","order":"A1","x":null,"reasoning":"look"}}'
    )
    assert '🔧 shop__lookup_order (order: "A1", x: null)' in render_entry(entry)


def test_the_validator_and_the_schema_accept_it_and_refuse_a_name_of_no_server():
    good = log_with(CALL["content"])
    assert validate_log(json.dumps(good)).problems == []
    jsonschema.validate(good, log_json_schema())

    bad = log_with({"toolCall": "lookup_order", "order": "A1"})
    problems = [str(p) for p in validate_log(json.dumps(bad)).problems]
    assert problems == [
        "entry 2, content.toolCall: unknown toolCall 'lookup_order'; expected one of "
        "postMessage, getThreadHistory, expandEntry, finishRequest, searchSlack, "
        "rememberForChannel, forgetForChannel, scheduleRoutine, "
        "SERVER__TOOL (a tool of an MCP server)"
    ]
    try:
        jsonschema.validate(bad, log_json_schema())
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("the schema took a toolCall of no server")


def test_its_reasoning_is_a_string_like_every_call():
    problems = [
        str(p)
        for p in validate_log(json.dumps(log_with({**CALL["content"], "reasoning": 5}))).problems
    ]
    assert problems == ["entry 2, content.reasoning: must be a string, found a number"]
