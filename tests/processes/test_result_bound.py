"""A server's result larger than ASSISTANT_MAX_MCP_RESULT_BYTES is not read (issue 43, point
2), over HTTP: the SDK's own server in a process of its own (a JSON body or, for MCP's
earlier versions, an event stream) answers with 50 MB, so that tracemalloc's peak in this
process is the client's alone (stdio, which the app starts itself, and the rest:
tests/mcp/test_result_bound.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tracemalloc

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from assistant.mcp.config import ServerConfig
from assistant.mcp.transports import Link, http_transport
from tests.mcp.test_result_bound import MOST, RESULT, assert_bounded, oversized_call
from tests.mcp_servers import ShopProcess


def test_an_http_result_past_the_bound_is_not_read_and_the_connection_is_made_again(caplog):
    with ShopProcess() as server, caplog.at_level(logging.WARNING):
        outcome, peak, answered, small = oversized_call(ServerConfig(name="shop", url=server.url))
    assert_bounded("shop", outcome, peak, answered, small, caplog)


def test_an_event_past_the_bound_is_not_read():
    """A server of MCP's earlier versions answers each call with an event stream (the
    SDK's server, asked with the initialize handshake): each event is read within the
    bound too."""

    async def scenario(url: str):
        link = Link(MOST)
        async with contextlib.AsyncExitStack() as stack:
            client = await stack.enter_async_context(
                Client(http_transport(url, {}, link, stack), mode="legacy")
            )
            tracemalloc.start()
            try:
                with pytest.raises(MCPError):
                    await client.call_tool("big", {"size": RESULT})
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            small = await client.call_tool("big", {"size": MOST // 4})
        return link, peak, small

    with ShopProcess(json_response=False) as server:
        link, peak, small = asyncio.run(scenario(server.url))
    assert link.too_large and peak < 3 * MOST, f"{peak:,} bytes at the peak"
    assert len(small.content[0].text) == MOST // 4
