"""ASSISTANT_MCP_FILE checked against its servers (`assistant check`; `serve`, `run`, `worker`
and `demo` print the summary at start): every server connected at once, its tools listed,
and every problem of every server said together: one that cannot be reached (a command that
does not exist named), a tool left out (a name a model cannot call, an argument the log keeps
for itself, a schema too large), servers left out of a run that may use them all (past the
tools one request may carry, or past the schemas' share of the context budget). The same
rules as the runs' (`assistant.mcp.connection`, `assistant.mcp.room`)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from assistant.mcp.room import ToolRoom, fit
from assistant.mcp.servers import McpServers

EVERY = "(every server)"  # the line of what a run that may use every server carries


@dataclass(frozen=True)
class McpFinding:
    """One line: `ok` True (works), False (a problem: something is left out or down)."""

    server: str
    what: str
    ok: bool
    said: str


async def check_servers(servers: McpServers, room: ToolRoom) -> list[McpFinding]:
    """Every server's findings, in the file's order, then what one request carries."""
    connections = list(servers.connections().values())
    # Each attempt waited for whole: a check has no answer to keep waiting.
    listed = await asyncio.gather(*(c.tools(wait=c.connect_seconds + 1) for c in connections))
    findings: list[McpFinding] = []
    offered = []
    for connection, tools in zip(connections, listed, strict=True):
        name = connection.config.name
        if not connection.connected:
            why = connection.down or "no answer in time"
            findings.append(McpFinding(name, "connected", False, f"no: {why}"))
            continue
        left = connection.left_out
        said = f"{_tools(len(tools))} offered" + (f", {len(left)} left out" if left else "")
        findings.append(McpFinding(name, "connected", True, said))
        findings += [McpFinding(name, f"tool {tool}", False, why) for tool, why in left]
        offered += tools
    # An `auth: user` server lists its tools to a signed-in person only: none to the check.
    findings += [
        McpFinding(c.name, "connected", True, "each person signs in (auth: user): not listed here")
        for c in servers.configs
        if c.per_person
    ]
    findings += [
        McpFinding(
            c.name,
            "connected",
            True,
            "the deployment's sign-in (auth: deployment, `assistant mcp login`): not listed here",
        )
        for c in servers.configs
        if c.deployment
    ]
    kept, out = fit(offered, room)
    findings += [McpFinding(o.server, "fits a request", False, o.why) for o in out]
    if offered:
        carried = room.builtins + len(kept)
        said = (
            f"{_tools(carried)} of the {room.per_request} a request may carry, "
            f"{room.cost(kept):,} tokens of schemas of the {room.tokens:,} they may take"
        )
        findings.append(McpFinding(EVERY, "one request", True, said))  # the rest said above
    return findings


def table(findings: Sequence[McpFinding]) -> str:
    """The findings, one line each: server, what, verdict, what was found."""
    rows = [("server", "check", "", "found")]
    rows += [(f.server, f.what, "ok" if f.ok else "FAIL", f.said) for f in findings]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        "  ".join(
            [*(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)), row[3]]
        ).rstrip()
        for row in rows
    )


def summary(findings: Sequence[McpFinding]) -> str:
    """One line: all well, or every problem."""
    wrong = [f for f in findings if not f.ok]
    if not wrong:
        servers = ", ".join(f"{f.server} ({f.said})" for f in findings if f.what == "connected")
        return f"MCP check: all well: {servers}"
    said = "; ".join(f"{f.server} {f.what}: {f.said}" for f in wrong)
    return f"MCP check: {len(wrong)} failing: {said} (`assistant check` says more)"


def _tools(count: int) -> str:
    return f"{count} tool" if count == 1 else f"{count} tools"
