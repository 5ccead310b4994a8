"""An MCP server of many tools, on the official SDK, for the tests of what one request may
carry: `python many.py COUNT [SCHEMA_CHARS [HUGE]]` serves over stdio `COUNT` read-only tools
(`tool_000`, …, each echoing its `query`), each input schema about `SCHEMA_CHARS` characters
long (its argument's description), and `HUGE` more whose schema is ten times that."""

# No `from __future__ import annotations`: the tools' annotations are made at run time.
import sys
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field


def many(count: int, schema_chars: int = 0, huge: int = 0, name: str = "many") -> MCPServer:
    server = MCPServer(name)
    for index in range(count + huge):
        described = schema_chars * (10 if index >= count else 1)
        prefix = "huge" if index >= count else "tool"
        server.add_tool(
            _echo(described),
            name=f"{prefix}_{index:03d}",
            description="Echoes its query.",
            annotations=ToolAnnotations(read_only_hint=True),
        )
    return server


def _echo(described: int):  # type: ignore[no-untyped-def]
    def echo(query: str) -> str:
        return query

    query = Annotated[str, Field(description="d" * described)] if described else str
    echo.__annotations__ = {"query": query, "return": str}
    return echo


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:4]]
    many(*numbers).run()
