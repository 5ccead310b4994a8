"""An MCP server on the official SDK whose tools take time, for the tests of what a call does
while it is under way (`ShopServer(server=busy)` serves it on loopback, in the tests' process):

`count` (read-only) reports `steps` progress notifications, each with a message, then answers;
`hang` (read-only) reports one notification, then waits until it is cancelled, which it marks
in `CANCELLED` (a threading.Event: the server runs on a loop of its own); `book` (read-only)
asks the client for a form (an elicitation, through the SDK's resolvers: mid-call on
2025-11-25, an `InputRequiredResult` on 2026-07-28) before it answers; `order` asks for a form
of every kind of field and echoes the answer, whatever it is; `pay` asks the person to open a
page (URL mode, which the SDK's server asks only mid-call: 2025-11-25) and echoes the answer."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Annotated, Literal

from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

READ_ONLY = ToolAnnotations(read_only_hint=True)

busy = MCPServer("busy")
CANCELLED = threading.Event()
HANGING = threading.Event()  # `hang` has been called, and waits


@busy.tool(annotations=READ_ONLY)
async def count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, telling its progress."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}\x07 of {steps}")
    return f"counted to {steps}"


@busy.tool(annotations=READ_ONLY)
async def hang(ctx: Context) -> str:
    """Never answers: waits to be cancelled."""
    await ctx.report_progress(1, None, "started")
    HANGING.set()
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        CANCELLED.set()
        raise
    return "never"


class Seats(BaseModel):
    seats: int
    window: bool


def _seats() -> Elicit[Seats]:
    return Elicit("How many seats, and by the window?", Seats)


@busy.tool(annotations=READ_ONLY)
async def book(seats: Annotated[Seats, Resolve(_seats)]) -> str:
    """Books seats, asking the person how many."""
    return f"booked {seats.seats} seat(s)"


class OrderForm(BaseModel):
    item: str = Field(title="Item", description="What to order")
    count: int = Field(title="How many", ge=1, le=10)
    price: float = Field(title="Most you pay")
    gift: bool = Field(title="Gift wrap")
    size: Literal["S", "M", "L"] = Field(title="Size")
    note: str | None = Field(None, title="Note")


def _order() -> Elicit[OrderForm]:
    return Elicit("What should I order?", OrderForm)


@busy.tool(annotations=READ_ONLY)
async def order(answer: Annotated[ElicitationResult[OrderForm], Resolve(_order)]) -> str:
    """Orders what the person says, asking them."""
    if answer.action == "accept":
        return "accept " + json.dumps(answer.data.model_dump(), sort_keys=True)
    return answer.action


@busy.tool(annotations=READ_ONLY)
async def pay(ctx: Context) -> str:
    """Has the person pay on the shop's page."""
    result = await ctx.elicit_url(
        "Pay on the shop's page", "https://pay.example.com/checkout?order=7", "pay-7"
    )
    return f"paid: {result.action}"
