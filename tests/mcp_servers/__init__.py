"""MCP servers the tests start on loopback, on the SDK's own server."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

from tests.mcp_servers.shop import shop

SHOP_SCRIPT = Path(__file__).with_name("shop.py")
STDIO_COMMAND = [sys.executable, str(SHOP_SCRIPT)]


class ShopServer:
    """tests/mcp_servers/shop.py (or another of these servers) over streamable HTTP, on a port
    the OS chose."""

    def __init__(self, port: int = 0, server: MCPServer = shop) -> None:
        """`port`: 0 for one the OS chooses; another to come back where a stopped one was."""
        # Made as a uvicorn on a host and port makes it (proto TCP), so that asyncio sets
        # TCP_NODELAY on each connection: with proto 0 it does not, and every answer's body
        # waits ~40 ms behind its headers for the client's delayed ACK (Nagle).
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self._sock.listen(128)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.peers: list[tuple[str, int]] = []  # each HTTP request's client address, in order
        app = server.streamable_http_app()

        async def recorded(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                host, port = scope["client"]
                self.peers.append((host, port))
            await app(scope, receive, send)

        config = uvicorn.Config(recorded, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._server.serve(sockets=[self._sock]))

    def start(self) -> ShopServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._server.force_exit = True  # a call of `slow` is left hanging
        self._thread.join(60)
        self._sock.close()
