"""The MCP server `bench.mcp_tools` calls: one read-only tool that answers at once, over
streamable HTTP on a loopback port the OS chooses (printed on its first line), in a process
of its own so that its CPU is not the app's. `python -m bench.mcp_server`."""

from __future__ import annotations

import asyncio
import socket

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("bench")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Its argument back."""
    return text


def main() -> None:
    # proto TCP, as uvicorn's own host-and-port socket has it: asyncio sets TCP_NODELAY on a
    # connection only then, and without it each answer's body waits ~40 ms behind its headers
    # for the client's delayed ACK (Nagle), which is the server's cost, not the client's.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
