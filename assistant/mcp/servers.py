"""The process's MCP servers: a connection to each, asked by each run for the tools it may
offer (narrowed by the channel's allow-list) and called through. An `auth: user` server has a
connection per person (their token on each request: `assistant.mcp.signin`), and a run
offers and calls it as the person it answers, never as another."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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
from assistant.mcp.signin.deployment import DEPLOYMENT_TEAM, DEPLOYMENT_USER, MISSING, STEP_UP
from assistant.mcp.transports import PersonAuth

if TYPE_CHECKING:
    from assistant.mcp.signin.tokens import SignIns

log = logging.getLogger(__name__)

Person = tuple[str, str]  # (workspace, Slack user id) of the person a run answers
DEPLOYMENT: Person = (DEPLOYMENT_TEAM, DEPLOYMENT_USER)  # an `auth: deployment` server's
# The one tool offered for an `auth: user` server whose tools no one has listed yet in this
# process (they need someone's sign-in): calling it asks the person to connect
# (assistant/run/approvals/sign_in.py names it too).
STAND_IN = "connect"
_STAND_IN_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
NOT_ANSWERING = (
    "the server {name!r} acts as the person who asks, and no person is being answered here"
)
CONNECTED = "connected to {name}: its tools are offered to the model from its next step"
STEP_UP_GRANTED = (
    "the server {server} refused the call for want of scope ({scope}), which the person's "
    "sign-in was granted already"
)


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
        self.sign_ins: SignIns | None = None  # the `auth: user` servers' (None: none served)
        self._personal: dict[asyncio.AbstractEventLoop, dict[tuple[str, str, str], Connection]] = {}
        self._known: dict[str, list[ServerTool]] = {}  # an `auth: user` server's, last listed
        self._missing: set[str] = set()  # `auth: deployment` servers said to lack a sign-in

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
                if not c.signs_in
            }
            self._by_loop[loop] = found
        return found

    def _person(self, config: ServerConfig, person: Person) -> Connection:
        """`person`'s own connection to an `auth: user` server, on this loop."""
        loop = asyncio.get_running_loop()
        mine = self._personal.setdefault(loop, {})
        key = (config.name, *person)
        found = mine.get(key)
        if found is None:
            found = Connection(config, self.deadline, self.most, self.redaction, PersonAuth())
            mine[key] = found
        return found

    async def _signed_in(self, config: ServerConfig, person: Person) -> Connection | None:
        """The person's connection with their current token (refreshed if due), or None when
        they must connect first; a token the server refuses is dropped (they connect again)."""
        if self.sign_ins is None:
            return None
        token = await self.sign_ins.bearer(config.name, *person)
        if token is None:
            return None
        connection = self._person(config, person)
        assert connection.auth is not None
        connection.auth.token, connection.auth.refused = token, False
        if not connection.connected:
            await connection.tools()
        if connection.auth.refused:
            await self._refused(config, person)
            return None
        return connection

    async def _deployed(self, config: ServerConfig) -> Connection | None:
        """An `auth: deployment` server's one connection, with the deployment's token; None
        (and the operator told, once until it is back) when there is none or it is refused."""
        connection = await self._signed_in(config, DEPLOYMENT)
        if connection is None:
            if config.name not in self._missing:
                self._missing.add(config.name)
                log.warning(
                    "MCP server %s has no usable deployment sign-in: run `assistant mcp login %s`",
                    config.name,
                    config.name,
                )
            return None
        self._missing.discard(config.name)
        return connection

    async def _refused(self, config: ServerConfig, person: Person) -> None:
        log.info("MCP server %s refused %s's token: they connect again", config.name, person[1])
        assert self.sign_ins is not None
        await self.sign_ins.forget(config.name, *person)
        dropped = self._personal.get(asyncio.get_running_loop(), {}).pop(
            (config.name, *person), None
        )
        if dropped is not None:
            await dropped.close()

    async def _person_tools(self, config: ServerConfig, person: Person | None) -> list[ServerTool]:
        """An `auth: user` server's tools for `person`: listed as them once they are
        connected; else as last listed for anyone (a call asks them to connect), else the
        stand-in that asks them to."""
        if person is None or self.sign_ins is None:
            return []
        connection = await self._signed_in(config, person)
        if connection is not None and connection.connected:
            listed = await connection.tools()
            if listed:
                self._known[config.name] = listed
                return listed
        known = self._known.get(config.name)
        if known:
            return list(known)
        return [
            ServerTool(
                server=config.name,
                name=STAND_IN,
                description=(
                    f"Connect to {config.name} as the person you answer: they are asked to "
                    "sign in, and its tools are offered once they have."
                ),
                schema=_STAND_IN_SCHEMA,
                read_only=True,
                approve="never",
            )
        ]

    async def _deployment_tools(self, config: ServerConfig) -> list[ServerTool]:
        """An `auth: deployment` server's tools, listed with the deployment's token; those
        last listed while it has none (a call then reads why), or none if never listed."""
        connection = await self._deployed(config) if self.sign_ins is not None else None
        if connection is not None and connection.connected:
            listed = await connection.tools()
            if listed:
                self._known[config.name] = listed
                return listed
        return list(self._known.get(config.name, ()))

    async def tools(
        self, allowed: Sequence[str] | None = None, person: Person | None = None
    ) -> list[ServerTool]:
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
        personal = [
            c
            for c in self.configs
            if c.per_person
            and (
                allowed is None
                or c.name in allowed
                or any(a.startswith(f"{c.name}__") for a in allowed)
            )
        ]
        deployed = [
            c
            for c in self.configs
            if c.deployment
            and (
                allowed is None
                or c.name in allowed
                or any(a.startswith(f"{c.name}__") for a in allowed)
            )
        ]
        listed = await asyncio.gather(
            *(c.tools() for c in connections),
            *(self._person_tools(c, person) for c in personal),
            *(self._deployment_tools(c) for c in deployed),
        )
        # In the file's order, whichever way each is reached.
        order = {c.name: place for place, c in enumerate(self.configs)}
        tools = sorted(
            (tool for tools in listed for tool in tools if allows(allowed, tool)),
            key=lambda t: order.get(t.server, 0),
        )
        return tools

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
        self,
        tool: ServerTool,
        arguments: dict[str, object],
        progress: Progress | None = None,
        person: Person | None = None,
    ) -> CallOutcome:
        """The call's outcome; a call of an `auth: user` server is made as `person`, and not
        made (`sign_in`) when they must connect first. `progress`: told the call's progress."""
        config = next(c for c in self.configs if c.name == tool.server)
        if config.deployment:
            return await self._deployment_call(config, tool, arguments, progress)
        if not config.per_person:
            return await self._connections()[tool.server].call(tool.name, dict(arguments), progress)
        if person is None or self.sign_ins is None:
            return CallOutcome(NOT_ANSWERING.format(name=tool.server), True)
        connection = await self._signed_in(config, person)
        if connection is None:
            return CallOutcome("", True, sign_in=True)
        if tool.name == STAND_IN and tool.schema is _STAND_IN_SCHEMA:
            return CallOutcome(CONNECTED.format(name=tool.server), False)
        assert connection.auth is not None
        connection.auth.wanted = None
        outcome = await connection.call(tool.name, dict(arguments), progress)
        if connection.auth.refused:
            await self._refused(config, person)
            return CallOutcome("", True, sign_in=True)
        wanted = connection.auth.wanted
        if wanted is not None:  # a step-up: connect again with more scope
            granted = await self.sign_ins.granted(config.name, *person)
            if set(wanted.split()) <= set((granted or "").split()):
                # Asking again would ask for what they have: the server's refusal stands.
                return CallOutcome(STEP_UP_GRANTED.format(server=config.name, scope=wanted), True)
            log.info("MCP server %s asks %s for more scope", config.name, person[1])
            return CallOutcome("", True, sign_in=True, scope=wanted)
        return outcome

    async def _deployment_call(
        self,
        config: ServerConfig,
        tool: ServerTool,
        arguments: dict[str, object],
        progress: Progress | None,
    ) -> CallOutcome:
        missing = CallOutcome(MISSING.format(server=config.name), True)
        connection = await self._deployed(config) if self.sign_ins is not None else None
        if connection is None:
            return missing
        assert connection.auth is not None
        connection.auth.wanted = None
        outcome = await connection.call(tool.name, dict(arguments), progress)
        if connection.auth.refused:
            await self._refused(config, DEPLOYMENT)
            await self._deployed(config)  # the operator told
            return missing
        if connection.auth.wanted is not None:  # only an admin can sign the deployment in
            log.warning(
                "MCP server %s asks the deployment for more scope (%s): run `assistant mcp "
                "login %s --scope …`",
                config.name,
                connection.auth.wanted,
                config.name,
            )
            return CallOutcome(
                STEP_UP.format(server=config.name, scope=connection.auth.wanted), True
            )
        return outcome

    async def close(self) -> None:
        """Close this loop's connections (the stdio servers' processes end with them)."""
        loop = asyncio.get_running_loop()
        connections = [
            *self._by_loop.pop(loop, {}).values(),
            *self._personal.pop(loop, {}).values(),
        ]
        await asyncio.gather(*(c.close() for c in connections))
