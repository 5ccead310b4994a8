"""A run's toolbox narrowed by a channel's allow-list (the shape of the channel settings'
`tool_servers`: None, every server of the file; [], none; else servers and `server__tool`s),
against real servers on loopback (HTTP and stdio)."""

from __future__ import annotations

import asyncio

from assistant.mcp.config import ServerConfig
from assistant.mcp.servers import McpServers
from assistant.run.tools.toolbox import toolbox
from tests.mcp_servers import STDIO_COMMAND, ShopServer


def test_the_allow_list_narrows_the_servers_and_tools_offered():
    server = ShopServer().start()
    configs = [
        ServerConfig(name="shop", url=server.url),
        ServerConfig(name="files", command=tuple(STDIO_COMMAND), exclude=frozenset({"slow"})),
    ]
    servers = McpServers(configs, 10)

    async def offered(allowed):
        return sorted((await toolbox({}, servers, allowed)).server_tools)

    async def scenario():
        try:
            return [
                await offered(allowed)
                for allowed in (None, [], ["files"], ["shop__lookup_order", "files__hostile"])
            ]
        finally:
            await servers.close()

    try:
        every, none, files, chosen = asyncio.run(scenario())
    finally:
        server.stop()
    # Those that need an approval too (cancel_order: asked for when called); the file's
    # exclude holds.
    assert every == [
        "files__big", "files__cancel_order", "files__hostile", "files__lookup_order",
        "files__refuse", "files__whoami",
        "shop__big", "shop__cancel_order", "shop__hostile", "shop__lookup_order", "shop__refuse",
        "shop__slow", "shop__whoami",
    ]  # fmt: skip
    assert none == []
    assert files == [
        "files__big",
        "files__cancel_order",
        "files__hostile",
        "files__lookup_order",
        "files__refuse",
        "files__whoami",
    ]
    assert chosen == ["files__hostile", "shop__lookup_order"]


def test_an_entry_naming_no_server_of_the_file_is_said_once(caplog):
    server = ShopServer().start()
    servers = McpServers([ServerConfig(name="shop", url=server.url)], 10)

    async def scenario():
        try:
            for _ in range(2):
                await toolbox({}, servers, ["shpo", "shop__lookup_order", "gone__tool"])
        finally:
            await servers.close()

    try:
        with caplog.at_level("WARNING", logger="assistant.mcp.servers"):
            asyncio.run(scenario())
    finally:
        server.stop()
    said = [r.getMessage() for r in caplog.records if r.name == "assistant.mcp.servers"]
    assert said == [
        "a channel's MCP servers name 'shpo', which ASSISTANT_MCP_FILE has no server for",
        "a channel's MCP servers name 'gone__tool', which ASSISTANT_MCP_FILE has no server for",
    ]
