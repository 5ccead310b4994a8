"""Tool calls from a server that does not honour `tool_choice: "required"` (llama.cpp's
`llama-server` for many templates, Ollama, small local models): the constrained mode, in which
the request carries no tools but a `response_format` of type `json_schema` whose schema is the
log's own assistant entry (`{"toolCall": NAME, …arguments, "reasoning": …}`, a `oneOf` over the
tools, from the same pydantic models as the tool schemas). llama.cpp, vLLM and Ollama constrain
the answer to it by a grammar, so the model can only answer with one tool call; it is read back
into the same `RawToolCall` a tool call makes, and the log is the same in both modes
(docs/configuration.md, "Pointing at an OpenAI-compatible server").
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from assistant.model.completion import ModelReply, RawToolCall
from assistant.model.tool_calls import Tools

# What the system message gains in this mode: the tools are described there already, and the
# schema holds the model to one call's shape, but not every server shows the schema to it.
JSON_MODE_NOTE = (
    "Answer with exactly one JSON object and nothing else: one tool call, the tool's name in "
    '"toolCall" and its arguments beside it, with "reasoning".'
)

_CUT_CALL = re.compile(r'\{\s*"toolCall"\s*:\s*"([^"\\]+)"')


def _entry_schema(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool["function"]
    parameters = function["parameters"]
    return {
        "type": "object",
        "properties": {"toolCall": {"const": function["name"]}, **parameters["properties"]},
        "required": ["toolCall", *parameters["required"]],
        "additionalProperties": False,
    }


def response_format(tools: Tools) -> dict[str, Any]:
    """The `response_format` of a call that offers `tools` (the run's: searchSlack's and its
    MCP servers' among them): one call of one of them."""
    schema = {"oneOf": [_entry_schema(tool) for tool in tools]}
    return {"type": "json_schema", "json_schema": {"name": "tool_call", "schema": schema}}


def calls_from_json(reply: ModelReply) -> ModelReply:
    """The reply's text read as one tool call. Text that is no JSON object naming a tool
    (an answer cut short by its cap, a server that ignored the format) becomes a call the
    model is told is wrong, as a malformed tool call is: never posted as it is."""
    text = (reply.text or "").strip()
    if reply.calls or not text:
        return reply
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict) and isinstance(value.get("toolCall"), str):
        name = value.pop("toolCall")
        arguments = json.dumps(value, ensure_ascii=False)
        return replace(reply, calls=[RawToolCall(name, arguments)], text=None)
    if not text.startswith("{"):
        return reply  # plain text after all: posted as any plain answer is
    # A call cut short still names its tool at its start (the schema's first property, which
    # llama.cpp's grammar writes first): the model is told that call's arguments are broken,
    # not that it named no tool.
    named = _CUT_CALL.match(text)
    return replace(reply, calls=[RawToolCall(named[1] if named else "", text)], text=None)
