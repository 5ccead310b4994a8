"""MCP servers the tests start on loopback, on the SDK's own server."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
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

    def __init__(
        self,
        port: int = 0,
        server: MCPServer = shop,
        gatekeeper: bool = False,
        gzip: bool = False,
        legacy: bool = False,
    ) -> None:
        """`port`: 0 for one the OS chooses; another to come back where a stopped one was.
        `server`: which of these servers.
        `gatekeeper`: every request refused as a gateway refuses a token, with HTTP 401 and
        a JSON-RPC error that quotes the request's Authorization header back. `gzip`: every
        answer compressed, whatever the request's Accept-Encoding (`accepted` keeps what it
        said). `legacy`: `server/discover` answered as a server of the 2025-11-25
        specification answers it (method not found), so that a client falls back to the
        initialize handshake and speaks 2025-11-25."""
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
        self.accepted: list[str] = []  # each HTTP request's Accept-Encoding, in order
        app: Any = server.streamable_http_app()
        if gzip:
            app = _gzip_regardless(app, self.accepted)
        if legacy:
            app = _without_discover(app)

        async def recorded(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                host, port = scope["client"]
                self.peers.append((host, port))
                if gatekeeper:
                    await refuse(scope, send)
                    return
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


class ShopProcess:
    """tests/mcp_servers/shop.py over streamable HTTP in a process of its own (what it
    allocates is not the test's), on a socket listening before it starts: connections wait in
    its backlog until the server takes them, so nothing waits for it to be ready."""

    def __init__(self, json_response: bool = False) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/mcp"
        fd = self._sock.fileno()
        command = [*STDIO_COMMAND, "--http", str(fd), *(["--json"] if json_response else [])]
        self._process = subprocess.Popen(command, pass_fds=[fd])

    def __enter__(self) -> ShopProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self._process.terminate()
        self._process.wait(60)
        self._sock.close()


async def refuse(scope: Any, send: Any) -> None:
    """HTTP 401 with a JSON-RPC error naming the token it was given."""
    headers = dict(scope["headers"])
    given = headers.get(b"authorization", b"none").decode()
    error = {"code": -32001, "message": f"invalid token: {given}"}
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    start = {"type": "http.response.start", "status": 401,
             "headers": [(b"content-type", b"application/json")]}  # fmt: skip
    await send(start)
    await send({"type": "http.response.body", "body": body})


def _gzip_regardless(app: Any, accepted: list[str]) -> Any:
    """`app` with every answer gzipped, as a server that ignores Accept-Encoding sends it."""
    from starlette.middleware.gzip import GZipMiddleware

    compressed = GZipMiddleware(app, minimum_size=0, exclude_content_types=())

    async def answer(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            accepted.append(headers.get(b"accept-encoding", b"").decode())
            headers[b"accept-encoding"] = b"gzip"
            scope = {**scope, "headers": list(headers.items())}
        await compressed(scope, receive, send)

    return answer


def _without_discover(app: Any) -> Any:
    """`app` as a server that predates `server/discover`: a request of it is answered with
    JSON-RPC's method not found; every other request reaches `app`."""

    async def answer(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        messages = [await receive()]
        while messages[-1].get("more_body"):
            messages.append(await receive())
        body = b"".join(m.get("body", b"") for m in messages)
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if isinstance(request, dict) and request.get("method") == "server/discover":
            error = {"code": -32601, "message": "Method not found"}
            answer_body = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "error": error})
            start = {"type": "http.response.start", "status": 200,
                     "headers": [(b"content-type", b"application/json")]}  # fmt: skip
            await send(start)
            await send({"type": "http.response.body", "body": answer_body.encode()})
            return
        replayed = iter(messages)

        async def again() -> Any:
            return next(replayed, None) or await receive()

        await app(scope, again, send)

    return answer


def offered(servers: Any) -> list[Any]:
    """The tools `servers` (an `McpServers`) offer a run, asked once, then their connections
    closed."""

    async def listed() -> list[Any]:
        try:
            return list(await servers.tools())
        finally:
            await servers.close()

    return asyncio.run(listed())
