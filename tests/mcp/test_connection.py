"""A server's connection against real servers on loopback: one down is left out and comes back
when it does; one lost while connected fails its call as a result, then comes back too."""

from __future__ import annotations

import asyncio
import logging
import socket

import pytest

from assistant.mcp import connection
from assistant.mcp.config import ServerConfig
from assistant.mcp.servers import McpServers
from tests.mcp_servers import STDIO_COMMAND, ShopServer


@pytest.fixture(autouse=True)
def retry_at_once(monkeypatch):
    """A server down is tried again on the next ask, not 5 s later: the test waits on nothing."""
    monkeypatch.setattr(connection, "RETRY_SECONDS", 0.0)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def names(tools) -> set[str]:
    return {t.qualified for t in tools}


def test_a_server_down_at_start_is_left_out_once_said_and_comes_back(caplog):
    port = free_port()
    servers = McpServers([ServerConfig(name="shop", url=f"http://127.0.0.1:{port}/mcp")], 10)

    async def scenario() -> tuple[set[str], set[str], set[str]]:
        down = names(await servers.tools())
        again = names(await servers.tools())
        server = ShopServer(port).start()
        try:
            back = names(await servers.tools())
        finally:
            await servers.close()
            server.stop()
        return down, again, back

    with caplog.at_level(logging.INFO, logger="assistant.mcp.connection"):
        down, again, back = asyncio.run(scenario())
    assert down == again == set()
    assert "shop__lookup_order" in back
    assert caplog.text.count("MCP server shop is down") == 1  # not one line a run
    assert "MCP server shop is back" in caplog.text


def test_a_server_lost_while_connected_fails_the_call_then_comes_back(caplog):
    server = ShopServer().start()
    port = server.port
    servers = McpServers([ServerConfig(name="shop", url=server.url)], 10)

    async def scenario():
        (tool,) = [t for t in await servers.tools() if t.name == "lookup_order"]
        first = await servers.call(tool, {"order": "A1"})
        server.stop()
        lost = await servers.call(tool, {"order": "A1"})
        gone = names(await servers.tools())
        again = ShopServer(port).start()
        try:
            back = names(await servers.tools())
            answered = await servers.call(tool, {"order": "B2"})
        finally:
            await servers.close()
            again.stop()
        return first, lost, gone, back, answered

    first, lost, gone, back, answered = asyncio.run(scenario())
    assert (first.text, first.failed) == ("Order A1: shipped on 2026-11-20", False)
    assert lost.failed and lost.text == "the server 'shop' could not be reached"
    assert gone == set()
    assert "shop__lookup_order" in back
    assert (answered.text, answered.failed) == ("Order B2: waiting for payment", False)


def test_a_server_that_never_answers_delays_a_run_only_so_long_and_the_next_too(monkeypatch):
    """A port that takes connections and never answers them (a listening socket no one
    accepts on): the run goes without its tools after WAIT_SECONDS, the attempt goes on, and
    the next run does not start another."""
    monkeypatch.setattr(connection, "WAIT_SECONDS", 0.5)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        servers = McpServers([ServerConfig(name="mute", url=url)], 10)

        async def scenario() -> tuple[set[str], set[str], int]:
            first = names(await servers.tools())
            second = names(await servers.tools())
            attempts = sum(
                1 for task in asyncio.all_tasks() if task.get_name() == "mcp mute"
            )  # the one attempt and its connection's task, never a second pair
            await servers.close()
            return first, second, attempts

        first, second, attempts = asyncio.run(scenario())
    assert first == second == set()
    assert attempts == 2


def test_calls_go_over_the_connection_the_tools_were_listed_on():
    """A call of a server's tool costs one request on the HTTP connection kept open since its
    tools were listed, not a new connection (its handshake, and the SDK's discovery, again)."""
    server = ShopServer().start()
    servers = McpServers([ServerConfig(name="shop", url=server.url)], 10)

    async def scenario() -> list[bool]:
        (tool,) = [t for t in await servers.tools() if t.name == "lookup_order"]
        try:
            return [(await servers.call(tool, {"order": "A1"})).failed for _ in range(5)]
        finally:
            await servers.close()
            server.stop()

    assert asyncio.run(scenario()) == [False] * 5
    assert len(server.peers) >= 7  # discovery and the listing, then the five calls
    assert len(set(server.peers)) == 1, server.peers


@pytest.mark.parametrize("way", ["http", "stdio"])
def test_a_server_s_own_error_is_its_refusal_and_it_stays_connected(way, caplog):
    """JSON-RPC's -32000 is the SDK's code for a closed connection and the first of the
    range left to servers' own errors: the server answered, so it is a refusal the model
    reads, and the server is not dropped (issue 43, point 4)."""
    server = ShopServer().start() if way == "http" else None
    config = (
        ServerConfig(name="shop", url=server.url)
        if server is not None
        else ServerConfig(name="shop", command=tuple(STDIO_COMMAND))
    )
    servers = McpServers([config], 10)

    async def scenario():
        tools = {t.name: t for t in await servers.tools()}
        try:
            refused = await servers.call(tools["refuse"], {})
            still = names(await servers.tools())
            answered = await servers.call(tools["lookup_order"], {"order": "A1"})
        finally:
            await servers.close()
        return refused, still, answered

    try:
        with caplog.at_level(logging.INFO, logger="assistant.mcp.connection"):
            refused, still, answered = asyncio.run(scenario())
    finally:
        if server is not None:
            server.stop()
    assert (refused.text, refused.failed) == (
        "the server refused the call: quota exceeded for none",
        True,
    )
    assert "shop__lookup_order" in still
    assert (answered.text, answered.failed) == ("Order A1: shipped on 2026-11-20", False)
    assert "lost" not in caplog.text and "is back" not in caplog.text
    if server is not None:
        assert len(set(server.peers)) == 1, server.peers  # one connection all along
