"""A second MCP server on the official SDK, for the tests of calls a stopped process may have
made (tests/app/test_unfinished_calls.py): `ShopServer(ledger)` serves it over streamable HTTP
on loopback, in the tests' own process.

Its tools change something, and answer their first call never (its work done, its answer lost
with the process that waited for it): `charge`, and `mark_paid`, which the server marks
`idempotentHint` (a second call changes nothing more). `CALLS` counts the calls each received;
`EXECUTED` is set once a first call has done its work."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

ledger = MCPServer("ledger")
CALLS: Counter[str] = Counter()
EXECUTED = threading.Event()


def reset() -> None:
    """Between tests: no call counted, none executed."""
    CALLS.clear()
    EXECUTED.clear()


@ledger.tool()
async def charge(order: str) -> str:
    """Charge an order's card."""
    return await _first_answer_lost("charge", f"Order {order} charged")


@ledger.tool(annotations=ToolAnnotations(idempotent_hint=True))
async def mark_paid(order: str) -> str:
    """Mark an order paid (again is the same)."""
    return await _first_answer_lost("mark_paid", f"Order {order} is marked paid")


async def _first_answer_lost(tool: str, done: str) -> str:
    CALLS[tool] += 1
    if CALLS[tool] == 1:
        EXECUTED.set()
        await asyncio.Event().wait()
    return done
