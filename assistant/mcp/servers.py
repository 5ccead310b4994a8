"""The process's MCP servers: a connection to each, asked by each run for the tools it may
offer (narrowed by the channel's allow-list) and called through."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from assistant.mcp.config import ServerConfig
from assistant.mcp.connection import (
    MAX_MESSAGE_BYTES,
    CallOutcome,
    Connection,
    Progress,
    ServerTool,
)
from assistant.mcp.redaction import Redaction, redact_logs
from assistant.mcp.room import ToolRoom, fit

log = logging.getLogger(__name__)


def allows(allowed: Sequence[str] | None, tool: ServerTool) -> bool:
    """A channel's allow-list (None: every server of the file; []: none; each entry a server's
    name or one tool's `server__tool`)."""
    if allowed is None:
        return True
    return tool.server in allowed or tool.qualified in allowed


class McpServers:
    """Every server of ASSISTANT_MCP_FILE. Connections are made by the event loop that uses
    them (the SDK's streams belong to one), one set per loop."""

    def __init__(
        self, configs: Sequence[ServerConfig], deadline: float, most: int = MAX_MESSAGE_BYTES
    ) -> None:
        """`deadline`: a call's (ASSISTANT_MCP_CALL_SECONDS); `most`: the bytes of one
        message read (ASSISTANT_MAX_MCP_RESULT_BYTES)."""
        self.configs = tuple(configs)
        self.deadline = deadline
        self.most = most
        # One redaction of every server's text: a server may quote another's header.
        self.redaction = Redaction.of(self.configs)
        redact_logs(self.redaction)
        self._by_loop: dict[asyncio.AbstractEventLoop, dict[str, Connection]] = {}
        self._unknown: set[str] = set()  # allow-list entries already said to name no server
        self._said: set[tuple[str, str]] = set()  # servers left out of runs, once said

    def connections(self) -> dict[str, Connection]:
        """This loop's connections, by server name, in the file's order."""
        return self._connections()

    def _connections(self) -> dict[str, Connection]:
        loop = asyncio.get_running_loop()
        found = self._by_loop.get(loop)
        if found is None:
            found = {
                c.name: Connection(c, self.deadline, self.most, self.redaction)
                for c in self.configs
            }
            self._by_loop[loop] = found
        return found

    async def tools(self, allowed: Sequence[str] | None = None) -> list[ServerTool]:
        """The tools a run may offer: those of every server up now, in the file's order. An
        entry of a channel's allow-list that names no server of the file (a typo, a server
        since removed) is said once per process: the channel's settings are checked by
        pattern only, where the file may not be at hand (`assistant channels`)."""
        names = {c.name for c in self.configs}
        for entry in allowed or ():
            if entry.split("__", 1)[0] not in names and entry not in self._unknown:
                self._unknown.add(entry)
                log.warning(
                    "a channel's MCP servers name %r, which ASSISTANT_MCP_FILE has no server for",
                    entry,
                )
        connections = [
            c
            for c in self._connections().values()
            if allowed is None
            or c.config.name in allowed
            or any(a.startswith(f"{c.config.name}__") for a in allowed)
        ]
        listed = await asyncio.gather(*(c.tools() for c in connections))
        return [tool for tools in listed for tool in tools if allows(allowed, tool)]

    def fitted(self, tools: Sequence[ServerTool], room: ToolRoom) -> list[ServerTool]:
        """The tools of the servers that fit one request (`assistant.mcp.room`); a server
        left out is said once per process (a warning), not once a run."""
        kept, left = fit(tools, room)
        for out in left:
            if (out.server, out.kind) not in self._said:
                self._said.add((out.server, out.kind))
                log.warning(
                    "MCP server %s is left out of the runs that may use it: %s; narrow what "
                    "is offered (include or exclude in ASSISTANT_MCP_FILE, a channel's tool "
                    "servers)",
                    out.server,
                    out.why,
                )
        return kept

    async def call(
        self, tool: ServerTool, arguments: dict[str, object], progress: Progress | None = None
    ) -> CallOutcome:
        return await self._connections()[tool.server].call(tool.name, dict(arguments), progress)

    async def close(self) -> None:
        """Close this loop's connections (the stdio servers' processes end with them)."""
        connections = self._by_loop.pop(asyncio.get_running_loop(), {})
        await asyncio.gather(*(c.close() for c in connections.values()))
