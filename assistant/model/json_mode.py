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
from assistant.model.stream import (
    CallArguments,
    CallEnded,
    CallStarted,
    ReplyAssembler,
    ReplyEnded,
    StepEvent,
    whole_events,
)
from assistant.model.tool_calls import Tools
from context.toolcalls import TOOL_CALLS

# What the system message gains in this mode: the schema holds the model to one call's shape,
# but servers turn it into a grammar the model never reads (llama.cpp, vLLM, Ollama), and the
# request carries no `tools`: what each tool does and what its arguments mean are said here,
# after this note (`tools_note`).
JSON_MODE_NOTE = (
    "Answer with exactly one JSON object and nothing else: one tool call, the tool's name in "
    '"toolCall" and its arguments beside it, with "reasoning".'
)
TOOLS_HEAD = "The tools:"


def _one_line(text: object) -> str:
    return " ".join(text.split()) if isinstance(text, str) else ""


def _builtin_descriptions() -> dict[str, tuple[str, dict[str, str]]]:
    """What each built-in tool does and what its arguments mean, from the docstrings and
    field descriptions of its pydantic model (the function schemas leave them out: in the
    tools mode the fixed system message says it)."""
    described: dict[str, tuple[str, dict[str, str]]] = {}
    for tool in TOOL_CALLS:
        schema = tool.model_json_schema()
        fields = {
            name: _one_line(value.get("description"))
            for name, value in schema["properties"].items()
            if name not in ("toolCall", "reasoning")
        }
        described[tool.name] = (_one_line(schema.get("description")), fields)
    return described


_BUILTIN = _builtin_descriptions()


def tools_note(tools: Tools) -> str:
    """The system message's lines on `tools` in this mode: one a tool, its name, what it
    does, its arguments and theirs (from its schema: an MCP server's description and its
    input schema's; a built-in's from its model). Never longer than the schemas themselves,
    which the context budget counts (`assistant.run.core.prompt`): names, types and
    descriptions are a part of them."""
    lines = [TOOLS_HEAD]
    for tool in tools:
        function = tool["function"]
        name = function["name"]
        own, fields = _BUILTIN.get(name, ("", {}))
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties")
        required = parameters.get("required")
        required = required if isinstance(required, list) else []
        arguments = []
        for argument, spec in (properties if isinstance(properties, dict) else {}).items():
            if argument == "reasoning":
                continue
            spec = spec if isinstance(spec, dict) else {}
            kind = [spec["type"]] if isinstance(spec.get("type"), str) else []
            if argument not in required:
                kind.append("optional")
            said = _one_line(spec.get("description")) or fields.get(argument, "")
            shown = f"{argument} ({', '.join(kind)})" if kind else argument
            arguments.append(f"{shown}: {said}" if said else shown)
        described = _one_line(function.get("description")) or own
        line = f"- {name}" + (f": {described}" if described else "")
        if arguments:
            line += f" Arguments: {' '.join(arguments)}"
        lines.append(line)
    return "\n".join(lines)


def json_instructions(instructions: str, tools: Tools) -> str:
    """The system message of a call in this mode: the instructions, the note, the tools."""
    return f"{instructions}\n\n{JSON_MODE_NOTE}\n{tools_note(tools)}"


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


def _object(text: str) -> Any:
    """`text` as JSON, or None; an object naming `toolCall` twice is none (json.loads keeps
    the last, where a stream showed the first)."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        if sum(key == "toolCall" for key, _ in items) > 1:
            raise ValueError("toolCall named twice")
        return dict(items)

    try:
        return json.loads(text, object_pairs_hook=pairs)
    except ValueError:
        return None


def calls_from_json(reply: ModelReply) -> ModelReply:
    """The reply's text read as one tool call. Text that is no JSON object naming a tool
    (an answer cut short by its cap, a server that ignored the format) becomes a call the
    model is told is wrong, as a malformed tool call is: never posted as it is."""
    text = (reply.text or "").strip()
    if reply.calls or not text:
        return reply
    value = _object(text)
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


class JsonCallStream:
    """A streamed answer in this mode read as the tool call it is while it arrives: once its
    JSON names the tool (`{"toolCall": NAME`, which the grammar writes first) the call starts
    and the text that follows comes as its arguments' pieces (so a postMessage's `text` shows
    in Slack as it is written: `assistant.model.json_stream`); at the end the whole answer is
    read as `calls_from_json` reads a whole one, and the call ends with those arguments."""

    def __init__(self) -> None:
        self._chunks = ReplyAssembler()
        self._head: list[str] = []  # the text before the tool is named
        self._name: str | None = None
        self._calls = False  # the server sent tool calls after all: they are read as such

    @property
    def finished(self) -> bool:
        return self._chunks.finished

    def feed(self, data: list[object], checked: bool = False) -> list[StepEvent]:
        events = self._chunks.feed(data, checked)
        self._calls = self._calls or bool(events)
        piece = self._chunks.take_text()
        if not piece or self._calls:
            return events
        if self._name is not None:
            return [*events, CallArguments(0, piece)]
        self._head.append(piece)
        head = "".join(self._head)
        named = _CUT_CALL.match(head.lstrip())
        if named is None:
            return events
        self._name = named[1]
        return [*events, CallStarted(0, self._name), CallArguments(0, head)]

    def end(self, latency_ms: float = 0.0) -> list[StepEvent]:
        events = self._chunks.end(latency_ms)
        ended = events[-1]
        assert isinstance(ended, ReplyEnded)
        if self._calls:
            return events
        reply = calls_from_json(ended.reply)
        if self._name is None:
            return whole_events(reply)
        (call,) = reply.calls  # named at its start: read as that one call, whole or cut
        return [CallEnded(0, call.name, call.arguments, call.id), ReplyEnded(reply)]
