"""What the servers' tools may add to one model request (docs/configuration.md#mcp-servers):
at most ASSISTANT_MAX_TOOLS_PER_REQUEST tools in all, the run's own among them, and their
schemas within a share of the log's context budget. Servers are taken whole, in the file's
order: one whose tools would pass either is left out, and the next ones are tried. So the
same servers are left out on every run, and a thread is never blamed for them: what is
left of the budget is the log's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from assistant.mcp.connection import ServerTool

TOOLS_SETTING = "ASSISTANT_MAX_TOOLS_PER_REQUEST"


@dataclass(frozen=True)
class ToolRoom:
    per_request: int  # tools one request may carry (ASSISTANT_MAX_TOOLS_PER_REQUEST)
    builtins: int  # the run's own tools among them
    tokens: int  # what the servers' schemas may take of every request
    cost: Callable[[Sequence[ServerTool]], int]  # tokens of these tools' schemas, as sent


@dataclass(frozen=True)
class LeftOut:
    server: str
    kind: str  # "tools" or "tokens": which of the two it would pass
    why: str


def fit(tools: Sequence[ServerTool], room: ToolRoom) -> tuple[list[ServerTool], list[LeftOut]]:
    """The tools of the servers that fit, in their order, and the servers left out."""
    by_server: dict[str, list[ServerTool]] = {}
    for tool in tools:
        by_server.setdefault(tool.server, []).append(tool)
    kept: list[ServerTool] = []
    left: list[LeftOut] = []
    used = 0
    for server, its in by_server.items():
        carried = room.builtins + len(kept)
        if carried + len(its) > room.per_request:
            why = (
                f"its {len(its)} tools and the {carried} before them would pass the "
                f"{room.per_request} tools a request may carry ({TOOLS_SETTING})"
            )
            left.append(LeftOut(server, "tools", why))
            continue
        cost = room.cost(its)
        if used + cost > room.tokens:
            why = (
                f"its tools' schemas ({cost:,} tokens) and the {used:,} before them would pass "
                f"the {room.tokens:,} the servers' schemas may take of the context budget"
            )
            left.append(LeftOut(server, "tokens", why))
            continue
        kept += its
        used += cost
    return kept, left
