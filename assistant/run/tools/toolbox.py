"""The tools of one run: the built-ins (searchSlack where the channel turns Slack search on,
the memory's where the person answered may write it),
and the tools of the MCP servers that are up and that the channel allows (a replay: those its
recorded log called, never carried out). One toolbox answers for all of them: the schemas each
model call sends, the parsing of each call, and the function that carries it out."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assistant.model.tool_calls import (
    TOOL_SCHEMAS,
    offered_tools,
    parse_server_call,
    parse_tool_call,
    server_function_schema,
    tool_names,
)
from assistant.run.approvals.sign_in import SignInWaits
from assistant.run.core.run_context import RunContext, ToolFunction
from assistant.run.tools.server_tools import FAILED, ServerCaps, ServerToolCalls
from context.entry import AssistantEntry, Entry
from context.toolcalls import (
    ForgetForChannel,
    RememberForChannel,
    SearchSlack,
    ServerToolCall,
    ToolCall,
)

# The MCP SDK is imported only where ASSISTANT_MCP_FILE names servers (assistant.app).
if TYPE_CHECKING:
    from assistant.mcp.connection import ServerTool
    from assistant.mcp.room import ToolRoom
    from assistant.mcp.servers import McpServers
    from assistant.run.core.prompt import PromptBudget

# A tool whose schema is not known (a replay's, an eval's: the log keeps calls, not schemas).
ANY_ARGUMENTS: dict[str, Any] = {"type": "object", "additionalProperties": True}


@dataclass(frozen=True)
class Toolbox:
    builtins: dict[str, ToolFunction]
    server_tools: frozenset[str] = frozenset()  # the SERVER__TOOLs offered
    server_function: ToolFunction | None = None  # what carries each of them out
    schemas: list[dict[str, Any]] = field(default_factory=lambda: TOOL_SCHEMAS)

    @property
    def extra_schemas(self) -> list[dict[str, Any]]:
        """What the tools beyond every run's add to every call (the prompt's budget makes
        room): searchSlack's, the servers'."""
        return self.schemas[len(TOOL_SCHEMAS) :]

    def parse(self, name: str, arguments: str) -> ToolCall:
        """A call of a tool offered; any other is refused with the names of those offered."""
        if name in self.server_tools:
            return parse_server_call(name, arguments)
        return parse_tool_call(name, arguments, tool_names(self.schemas))

    def function(self, call: ToolCall) -> ToolFunction:
        if call.called in self.builtins:
            return self.builtins[call.called]
        assert self.server_function is not None, "a server tool is parsed only when offered"
        return self.server_function

    def needs_approval(self, call: ToolCall) -> bool:
        """Whether a person must allow the call first (never in a replay: it carries
        nothing out)."""
        calls = self.server_function
        return (
            isinstance(call, ServerToolCall)
            and isinstance(calls, ServerToolCalls)
            and calls.needs_approval(call)
        )

    def approval_rule(self, call: ServerToolCall) -> tuple[str, str | None]:
        """Who may allow the call ("asker", "editors", "usergroup:S…") and the channel its
        request is posted in (None: the call's thread): the MCP file's."""
        calls = self.server_function
        if isinstance(calls, ServerToolCalls):
            return calls.approval_rule(call)
        return "asker", None

    def may_repeat(self, call: ToolCall) -> bool:
        """Whether a call a stopped process may have made is made again (a tool of a server
        that marks it read-only or idempotent)."""
        calls = self.server_function
        return (
            isinstance(call, ServerToolCall)
            and isinstance(calls, ServerToolCalls)
            and calls.may_repeat(call)
        )

    async def approved(self, call: ServerToolCall, ctx: RunContext, index: int) -> str | None:
        """The result of a call a person allowed (a replay's stand-in carries nothing out)."""
        calls = self.server_function
        if calls is None or call.called not in self.server_tools:
            return FAILED.format(
                name=call.called, index=index, why="the tool is not offered to this run now"
            )
        if isinstance(calls, ServerToolCalls):
            return await calls.as_person(call, ctx, index, approved=True)
        return await calls(call, ctx, index)


async def toolbox(
    builtins: dict[str, ToolFunction],
    servers: McpServers | None,
    allowed: Sequence[str] | None = None,
    caps: ServerCaps | None = None,
    search: bool = False,
    budget: PromptBudget | None = None,
    person: tuple[str, str] | None = None,
    sign_ins: SignInWaits | None = None,
    memory: bool = False,
    routine: bool = False,
) -> Toolbox:
    """A run's toolbox: searchSlack where `search` is on, and the servers' tools that are up
    now and the channel allows (`allowed`: None, every server's; [], none; else servers'
    names and `server__tool`s), those of whole servers that fit one request
    (`tool_room`: the caps' tools per request, a share of `budget`). `person`: the one the
    run answers (workspace, user), as whom `auth: user` servers are listed and called;
    `sign_ins` asks them to connect. `memory`: whether the channel's memory tools are
    offered, `routine`: whether scheduleRoutine is."""
    offered = offered_tools(search, memory, routine)
    if servers is None or not (allowed is None or allowed):
        return Toolbox(dict(builtins), schemas=offered)
    caps = caps or ServerCaps()
    listed = await servers.tools(allowed, person)
    fitted = servers.fitted(listed, tool_room(offered, caps, budget))
    tools = {t.qualified: t for t in fitted}
    if not tools:
        return Toolbox(dict(builtins), schemas=offered)
    schemas = [server_function_schema(n, t.description, t.schema) for n, t in tools.items()]
    calls = ServerToolCalls(servers, tools, caps, person=person, sign_ins=sign_ins)
    return Toolbox(dict(builtins), frozenset(tools), calls, [*offered, *schemas])


def tool_room(
    offered: Sequence[dict[str, Any]], caps: ServerCaps, budget: PromptBudget | None
) -> ToolRoom:
    """What the servers' tools may add to a request that carries `offered` (the run's own
    tools): ASSISTANT_MAX_TOOLS_PER_REQUEST in all, and a share of `budget`'s log (no bound
    on tokens without one)."""
    from assistant.mcp.room import ToolRoom  # the SDK's import: only where servers are

    if budget is None:
        return ToolRoom(caps.tools_per_request, len(offered), sys.maxsize, lambda tools: 0)
    counter = budget.counter

    def cost(tools: Sequence[ServerTool]) -> int:
        schemas = [server_function_schema(t.qualified, t.description, t.schema) for t in tools]
        return counter.count(json.dumps(schemas, ensure_ascii=False, separators=(",", ":")))

    return ToolRoom(caps.tools_per_request, len(offered), budget.server_tools_tokens(), cost)


def called_server_tools(log: Sequence[Entry]) -> list[str]:
    """The MCP servers' tools a recorded log called, in the order first called."""
    return list(
        dict.fromkeys(
            e.content.called
            for e in log
            if isinstance(e, AssistantEntry) and isinstance(e.content, ServerToolCall)
        )
    )


def recorded_toolbox(
    builtins: dict[str, ToolFunction],
    log: Sequence[Entry],
    stand_in: ToolFunction,
    search: bool = False,
) -> Toolbox:
    """A replay's toolbox: the built-ins, and the servers' tools its recorded log called,
    offered with any arguments and answered by `stand_in` (which carries nothing out);
    with `search`, searchSlack too where the log called it (an eval asks, carrying nothing
    out; a replay has no Slack to search)."""
    offered = offered_tools(
        search and any(_called(e, SearchSlack) for e in log),
        any(_called(e, RememberForChannel) or _called(e, ForgetForChannel) for e in log),
    )
    names = called_server_tools(log)
    if not names:
        return Toolbox(dict(builtins), schemas=offered)
    schemas = [server_function_schema(name, "", ANY_ARGUMENTS) for name in names]
    return Toolbox(dict(builtins), frozenset(names), stand_in, [*offered, *schemas])


def _called(entry: Entry, tool: type[ToolCall]) -> bool:
    return isinstance(entry, AssistantEntry) and isinstance(entry.content, tool)
