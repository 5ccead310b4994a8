"""What every model call sends before the log: the tool schemas and the system message, small
(each rule said once) and complete (every argument, its type and bounds)."""

from __future__ import annotations

import json

import pytest

from assistant.model.tool_calls import TOOL_SCHEMAS, ToolCallError, parse_tool_call
from assistant.run.core.prompt import fixed_tokens
from context.tokens import counter_for

FIXED_GOAL = 450  # tokens of o200k_base, as the context budget counts them


def test_the_fixed_text_is_at_most_450_tokens():
    assert fixed_tokens(counter_for("gpt-4o")) <= FIXED_GOAL


def test_the_schemas_carry_names_types_and_bounds_and_no_descriptions():
    assert "description" not in json.dumps(TOOL_SCHEMAS)
    parameters = {t["function"]["name"]: t["function"]["parameters"] for t in TOOL_SCHEMAS}
    assert parameters == {
        "postMessage": {
            "type": "object",
            "properties": {
                "text": {"type": "string", "minLength": 1},
                "reasoning": {"type": "string"},
            },
            "required": ["text", "reasoning"],
        },
        "getThreadHistory": {
            "type": "object",
            "properties": {
                "ascending": {"type": "boolean"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 200},
                "reasoning": {"type": "string"},
            },
            "required": ["reasoning"],
        },
        "expandEntry": {
            "type": "object",
            "properties": {
                "index": {"type": "integer", "minimum": 0},
                "reasoning": {"type": "string"},
            },
            "required": ["index", "reasoning"],
        },
        "finishRequest": {
            "type": "object",
            "properties": {"reasoning": {"type": "string"}},
            "required": ["reasoning"],
        },
    }


@pytest.mark.parametrize(
    ("name", "arguments", "problem"),
    [
        ("postMessage", {"text": "hi", "channel": "C1"}, "channel: Extra inputs are not permitted"),
        ("getThreadHistory", {"limit": 500}, "limit: Input should be less than or equal to 200"),
        ("postMessage", {"text": ""}, "text: String should have at least 1 character"),
    ],
)
def test_what_the_schema_no_longer_says_is_still_refused_with_a_clear_error(
    name, arguments, problem
):
    with pytest.raises(ToolCallError) as caught:
        parse_tool_call(name, json.dumps(arguments))
    assert str(caught.value) == f"the arguments of {name} do not fit its schema: {problem}"
