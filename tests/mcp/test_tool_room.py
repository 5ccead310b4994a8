"""What the servers' tools may add to one request (issue 43, points 5 and 6): a tool whose
schema is too large is left out with one line; whole servers are left out, in the file's
order, past ASSISTANT_MAX_TOOLS_PER_REQUEST or past their share of the context budget, said
once per process. Against the SDK's own servers (tests/mcp_servers/many.py, over stdio)."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

from assistant.mcp.config import ServerConfig
from assistant.mcp.servers import McpServers
from assistant.run.core.prompt import PromptBudget
from assistant.run.tools.server_tools import ServerCaps
from assistant.run.tools.toolbox import toolbox

MANY = str(Path(__file__).parents[1] / "mcp_servers" / "many.py")
LEFT_OUT = "is left out of the runs that may use it"


def many(name: str, count: int, schema_chars: int = 0, huge: int = 0) -> ServerConfig:
    command = (sys.executable, MANY, str(count), str(schema_chars), str(huge))
    return ServerConfig(name=name, command=command)


def runs(servers: McpServers, count: int, **options):
    """The toolboxes of `count` runs, one after the other, on one process's servers."""

    async def scenario():
        try:
            return [await toolbox({}, servers, None, **options) for _ in range(count)]
        finally:
            await servers.close()

    return asyncio.run(scenario())


def test_a_tool_whose_schema_is_too_large_is_left_out_with_one_line(caplog):
    servers = McpServers([many("wide", 3, 2_000, huge=1)], 30)
    with caplog.at_level(logging.WARNING, logger="assistant.mcp.connection"):
        (box,) = runs(servers, 1)
    assert sorted(box.server_tools) == ["wide__tool_000", "wide__tool_001", "wide__tool_002"]
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and said[0].startswith("MCP server wide: tool 'huge_003' left out: ")
    assert said[0].endswith(
        "characters, more than the 16,000 a tool's schema may take of every request"
    )


def test_whole_servers_past_the_tools_a_request_may_carry_are_left_out_once_said(caplog):
    servers = McpServers([many("a", 10), many("b", 130), many("c", 10)], 30)
    with caplog.at_level(logging.WARNING, logger="assistant.mcp.servers"):
        first, second = runs(servers, 2, caps=ServerCaps(tools_per_request=128))
    assert {n.split("__")[0] for n in first.server_tools} == {"a", "c"}
    assert len(first.schemas) == 4 + 20 <= 128
    assert second.server_tools == first.server_tools  # the same servers, run after run
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        "MCP server b is left out of the runs that may use it: its 130 tools and the 14 before "
        "them would pass the 128 tools a request may carry (ASSISTANT_MAX_TOOLS_PER_REQUEST); "
        "narrow what is offered (include or exclude in ASSISTANT_MCP_FILE, a channel's tool "
        "servers)"
    ]


def test_the_servers_schemas_keep_to_their_share_of_the_budget(caplog):
    budget = PromptBudget.for_window("gpt-4o-mini", 16_000, 4_000)
    servers = McpServers([many("small", 5), many("wordy", 20, 2_000), many("last", 5)], 30)
    with caplog.at_level(logging.WARNING, logger="assistant.mcp.servers"):
        (box,) = runs(servers, 1, budget=budget)
    assert {n.split("__")[0] for n in box.server_tools} == {"small", "last"}
    assert budget.with_tools(box.extra_schemas).tokens >= budget.tokens * 3 // 4
    (said,) = [r.getMessage() for r in caplog.records]
    assert said.startswith("MCP server wordy is left out of the runs that may use it: its tools' ")
    assert f"the {budget.server_tools_tokens():,} the servers' schemas may take" in said
