"""The tools of one run: the built-ins, and the tools of the MCP servers that are up and that
the channel allows. One toolbox answers for all of them: the schemas each model call sends, the
parsing of each call, and the function that carries it out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assistant.mcp.servers import McpServers
from assistant.model.tool_calls import (
    TOOL_SCHEMAS,
    ToolCallError,
    parse_server_call,
    parse_tool_call,
    server_function_schema,
)
from assistant.run.tools.run_context import ToolFunction
from assistant.run.tools.server_tools import ServerCaps, ServerToolCalls
from context.toolcalls import SERVER_TOOL, TOOL_CALLS_BY_NAME, ToolCall


@dataclass(frozen=True)
class Toolbox:
    builtins: dict[str, ToolFunction]
    servers: ServerToolCalls | None = None
    schemas: list[dict[str, Any]] = field(default_factory=lambda: TOOL_SCHEMAS)

    @property
    def extra_schemas(self) -> list[dict[str, Any]]:
        """What the servers' tools add to every call (the prompt's budget makes room)."""
        return self.schemas[len(TOOL_SCHEMAS) :]

    def parse(self, name: str, arguments: str) -> ToolCall:
        if name in TOOL_CALLS_BY_NAME or self.servers is None or not SERVER_TOOL.match(name):
            return parse_tool_call(name, arguments)
        if name not in self.servers.tools:
            offered = ", ".join([*TOOL_CALLS_BY_NAME, *self.servers.tools])
            raise ToolCallError(f"unknown tool {name!r}; the tools are {offered}")
        return parse_server_call(name, arguments)

    def function(self, call: ToolCall) -> ToolFunction:
        if call.called in self.builtins:
            return self.builtins[call.called]
        assert self.servers is not None, "a server tool is parsed only when offered"
        return self.servers


async def toolbox(
    builtins: dict[str, ToolFunction],
    servers: McpServers | None,
    allowed: Sequence[str] | None = None,
    caps: ServerCaps | None = None,
) -> Toolbox:
    """A run's toolbox: the servers' tools that are up now, and the channel allows
    (`allowed`: None, every server's; [], none; else servers' names and `server__tool`s).
    A tool that needs a person's approval is not offered."""
    if servers is None or allowed == []:
        return Toolbox(dict(builtins))
    tools = {t.qualified: t for t in await servers.tools(allowed) if not t.needs_approval}
    if not tools:
        return Toolbox(dict(builtins))
    schemas = [server_function_schema(n, t.description, t.schema) for n, t in tools.items()]
    calls = ServerToolCalls(servers, tools, caps or ServerCaps())
    return Toolbox(dict(builtins), calls, [*TOOL_SCHEMAS, *schemas])
