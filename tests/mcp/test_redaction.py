"""Every text of a server that the app logs, traces or records passes one redaction (issue 43,
point 3): the MCP file's header values, tokens by their vendors' prefixes, what follows
`Bearer`; against the SDK's own server on loopback."""

from __future__ import annotations

import asyncio
import logging

from pydantic import SecretStr

from assistant.mcp.config import ServerConfig
from assistant.mcp.redaction import Redaction
from assistant.mcp.servers import McpServers
from tests.mcp_servers import ShopServer, offered

SECRET = "s3cret-token-value"
# Made up, of each vendor's shape.
TOKENS = [
    "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp",
    "xapp-1-A0123456789-0123456789012-abcdef",
    "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz",
    "glpat-abcdefghijklmnopqrst",
    "AKIAABCDEFGHIJKLMNOP",
]


def shop(url: str) -> ServerConfig:
    return ServerConfig(
        name="shop", url=url, headers={"Authorization": SecretStr(f"Bearer {SECRET}")}
    )


def test_a_refusal_quoting_the_header_and_results_quoting_tokens_are_recorded_redacted(caplog):
    server = ShopServer().start()
    servers = McpServers([shop(server.url)], 10)

    async def scenario():
        tools = {t.name: t for t in await servers.tools()}
        try:
            refused = await servers.call(tools["refuse"], {})
            echoed = [await servers.call(tools["lookup_order"], {"order": t}) for t in TOKENS]
        finally:
            await servers.close()
        return refused, echoed

    try:
        with caplog.at_level(logging.DEBUG):
            refused, echoed = asyncio.run(scenario())
    finally:
        server.stop()
    assert (
        refused.text == "the server refused the call: quota exceeded for [secret]"
    )  # the whole value
    assert [e.text for e in echoed] == ["Order [secret]: no such order"] * len(TOKENS)
    assert SECRET not in caplog.text


def test_a_server_refusing_the_connection_is_logged_without_the_header_it_quotes(caplog):
    server = ShopServer(gatekeeper=True).start()
    servers = McpServers([shop(server.url)], 10)

    try:
        with caplog.at_level(logging.DEBUG):
            listed = offered(servers)
    finally:
        server.stop()
    assert listed == []
    assert "MCP server shop is down (it refused: invalid token: [secret])" in caplog.text
    assert SECRET not in caplog.text


def test_the_sdk_s_own_log_lines_are_redacted_too(caplog):
    """The SDK's client logs what a server sent in places (an answer it could not parse, an
    unknown event): its loggers pass the same redaction, tracebacks included."""
    servers = McpServers([shop("http://127.0.0.1:9/mcp")], 10)
    sdk = logging.getLogger("mcp.client.streamable_http")
    with caplog.at_level(logging.DEBUG):
        sdk.warning("Unknown SSE event: %s", f"{SECRET} {TOKENS[0]}")
        try:
            raise ValueError(f"could not parse {TOKENS[3]}")
        except ValueError:
            sdk.exception("Error parsing SSE message")
    assert "Unknown SSE event: [secret] [secret]" in caplog.text
    assert "could not parse [secret]" in caplog.text
    assert SECRET not in caplog.text and TOKENS[0] not in caplog.text
    assert TOKENS[3] not in caplog.text
    del servers


def test_the_redaction_takes_a_value_whole_and_each_long_word_of_it():
    redaction = Redaction.of([shop("http://127.0.0.1:9/mcp")])
    said = f"got 'Bearer {SECRET}', then '{SECRET}' alone, and a Token abcdefgh12345678"
    assert redaction.text(said) == ("got '[secret]', then '[secret]' alone, and a Token [secret]")
    assert redaction.text("Bearer short") == "Bearer short"  # not a token's length
