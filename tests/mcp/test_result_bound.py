"""A server's result larger than ASSISTANT_MAX_MCP_RESULT_BYTES is not read (issue 43, point
2): the SDK's own server in a process of its own (stdio here, started by the app's transport;
HTTP, a JSON body or an event stream: tests/processes/test_result_bound.py) answers with 50
MB; the call reads about the bound and no more (tracemalloc's peak, in this process, where
the client reads), says so, and the connection is dropped and made again for the next run."""

from __future__ import annotations

import asyncio
import logging
import tracemalloc

from assistant.mcp.config import ServerConfig
from assistant.mcp.servers import McpServers
from tests.mcp_servers import STDIO_COMMAND, ShopServer, offered

MOST = 1_000_000
RESULT = 50_000_000
TOO_LARGE = (
    "the server '{name}' sent a result larger than 1,000,000 bytes "
    "(ASSISTANT_MAX_MCP_RESULT_BYTES); it was not read, and the connection was dropped"
)


def oversized_call(config: ServerConfig):
    servers = McpServers([config], 60, most=MOST)

    async def scenario():
        tools = {t.name: t for t in await servers.tools()}
        tracemalloc.start()
        try:
            outcome = await servers.call(tools["big"], {"size": RESULT})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        try:
            again = {t.name: t for t in await servers.tools()}  # the next run's
            answered = await servers.call(again["lookup_order"], {"order": "A1"})
            # Under the bound (the SDK's server sends the text twice: content, structured).
            small = await servers.call(again["big"], {"size": MOST // 4})
        finally:
            await servers.close()
        return outcome, peak, answered, small

    return asyncio.run(scenario())


def test_a_stdio_line_past_the_bound_is_not_read_and_the_server_is_started_again(caplog):
    with caplog.at_level(logging.WARNING):
        config = ServerConfig(name="files", command=tuple(STDIO_COMMAND))
        outcome, peak, answered, small = oversized_call(config)
    assert_bounded("files", outcome, peak, answered, small, caplog)


def assert_bounded(name, outcome, peak, answered, small, caplog) -> None:
    assert (outcome.text, outcome.failed) == (TOO_LARGE.format(name=name), True)
    # Before the bound: the 50 MB read whole, about four times over (the body, its text,
    # the parsed message, the result's text).
    assert peak < 3 * MOST, f"{peak:,} bytes at the peak"
    assert f"MCP server {name} lost (it sent a message larger than 1,000,000 bytes)" in caplog.text
    assert (answered.text, answered.failed) == ("Order A1: shipped on 2026-11-20", False)
    assert (len(small.text), small.failed) == (MOST // 4, False)


def test_a_compressed_answer_is_declined_and_refused(caplog):
    """A small compressed body could inflate past any bound: compression is declined
    (`Accept-Encoding: identity`), and an answer compressed anyway is not read."""
    server = ShopServer(gzip=True).start()
    servers = McpServers([ServerConfig(name="shop", url=server.url)], 10, most=MOST)

    try:
        with caplog.at_level(logging.WARNING):
            listed = offered(servers)
    finally:
        server.stop()
    assert listed == []
    assert set(server.accepted) == {"identity"}
    assert (
        "MCP server shop is down (it sent an answer compressed (gzip) though asked for none)"
        in caplog.text
    )
