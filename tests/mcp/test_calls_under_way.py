"""A call while it is under way, against the SDK's own server on loopback, in both protocol
versions the client speaks (2026-07-28, found by `server/discover`; 2025-11-25, by the
initialize handshake of a server that has no discover): its progress notifications reach the
caller as text, redacted and bounded; the caller's task cancelled, the server is told
(`notifications/cancelled`) and stops the call."""

from __future__ import annotations

import asyncio

import pytest

from assistant.mcp.config import ServerConfig
from assistant.mcp.connection import MAX_PROGRESS, progress_text
from assistant.mcp.servers import McpServers
from tests.mcp_servers import ShopServer
from tests.mcp_servers.busy import CANCELLED, HANGING, busy

VERSIONS = {"2026-07-28": False, "2025-11-25": True}  # version -> served as a legacy server


@pytest.fixture(params=sorted(VERSIONS))
def busy_server(request):
    server = ShopServer(server=busy, legacy=VERSIONS[request.param]).start()
    server.version = request.param
    yield server
    server.stop()


def test_progress_reaches_the_caller_as_text_in_either_version(busy_server):
    servers = McpServers([ServerConfig(name="busy", url=busy_server.url)], 10)
    told: list[str] = []

    async def progress(text: str) -> None:
        told.append(text)

    async def scenario():
        (tool,) = [t for t in await servers.tools() if t.name == "count"]
        try:
            outcome = await servers.call(tool, {"steps": 3}, progress)
            return outcome, servers.connections()["busy"].version
        finally:
            await servers.close()

    outcome, version = asyncio.run(scenario())
    assert version == busy_server.version
    assert (outcome.text, outcome.failed) == ("counted to 3", False)
    # The control character the server sent is not shown.
    assert told == ["33% · step 1 of 3", "67% · step 2 of 3", "100% · step 3 of 3"]


def test_a_cancelled_caller_cancels_the_call_on_the_server(busy_server):
    CANCELLED.clear()
    HANGING.clear()
    servers = McpServers([ServerConfig(name="busy", url=busy_server.url)], 30)

    async def scenario() -> bool:
        (tool,) = [t for t in await servers.tools() if t.name == "hang"]
        call = asyncio.create_task(servers.call(tool, {}))
        try:
            await asyncio.to_thread(HANGING.wait, 30)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            return await asyncio.to_thread(CANCELLED.wait, 30)
        finally:
            await servers.close()

    assert asyncio.run(scenario())


def test_progress_text_is_a_share_or_a_count_and_bounded():
    assert progress_text(1, 4, "") == "25%"
    assert progress_text(7, None, "rows") == "7 · rows"
    assert progress_text(5, 0, "") == "5"  # no share of a total of nothing
    assert progress_text(9, 4, "") == "9"  # past its total: the count, not 225%
    long = progress_text(1, 2, "word " * 100)
    assert len(long) == MAX_PROGRESS and long.endswith("…")
    assert progress_text(1, None, "a\n\n b") == "1 · a b"


def test_a_question_with_no_one_to_ask_is_answered_cancel_in_either_version(busy_server):
    """The client offers elicitation; a call made outside a run (no `current_asking`: a
    replay, say) has no one to ask, so the server is answered cancel, and the SDK's server
    ends such a call with an error; the server stays connected (the questions a run's call
    asks: tests/app/test_mcp_questions.py)."""
    servers = McpServers([ServerConfig(name="busy", url=busy_server.url)], 10)

    async def scenario():
        (tool,) = [t for t in await servers.tools() if t.name == "book"]
        try:
            outcome = await servers.call(tool, {})
            return outcome, servers.connections()["busy"].connected
        finally:
            await servers.close()

    outcome, connected = asyncio.run(scenario())
    assert outcome.failed and connected
    assert "cancel" in outcome.text.lower(), outcome.text
    assert "capability" not in outcome.text
