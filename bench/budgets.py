"""The spend limits' cost to a model call (docs/operations.md#spend-limits): the CPU the
budget check adds to each call of a channel with a budget, on SQLite and on PostgreSQL.

Each call is what the step loop does around a model call (`assistant.run.core.spend.Spending`,
as the app builds it): its worst case held in the channel's daily and monthly budgets (one
write transaction), then its usage counted and the 80% check (another), through the store's
threads as a run does. Process CPU time (every thread: the driver, SQLAlchemy, the executor)
over N calls, divided by N; the budget is large enough that no call is refused, as in a
channel running normally. The goal: at most 0.5 ms of CPU a call. PostgreSQL's own work is
the server's, not the app's: its figure is this process's share only.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.exc import OperationalError

from assistant.model.completion import ModelReply
from assistant.run.core.spend import Held, Spending
from bench.report import Figure, ms
from bench.store import scratch_postgres
from context.spend import Hold, SpendLimits, periods
from context.storage.store import SqlStore

FULL = {"calls": 3_000, "warmup": 200}
SMOKE = {"calls": 20, "warmup": 5}
GOAL_SECONDS = 0.0005
PRICES_MODEL = "gpt-4o-mini"


class _Prices:
    """ASSISTANT_PRICES' table for the one model (its real type is the settings')."""

    def price_of(self, model: str | None) -> _Price | None:
        return _Price() if model == PRICES_MODEL else None


class _Price:
    def cost(self, input_tokens: int, cached_tokens: int, output_tokens: int) -> float:
        return (input_tokens * 0.15 + output_tokens * 0.6) / 1_000_000


LIMITS = SpendLimits(daily_usd=1_000_000.0, monthly_usd=1_000_000.0)
REPLY = ModelReply(model=PRICES_MODEL, prompt_tokens=2_000, cached_tokens=0, completion_tokens=60)


def _none(model: str | None, prompt: int, cached: int, completion: int) -> int:
    return 0


async def _calls(spending: Spending, count: int) -> None:
    for n in range(count):
        channel = f"C0BENCH{n % 20:02d}"  # a few channels, as a busy workspace has
        held = await spending.reserve("T0BENCH", channel, LIMITS, None, 2_000, 4_000)
        assert isinstance(held, Held), held
        await spending.settle(held, REPLY, None, LIMITS, "T0BENCH", channel)


def measure(store: SqlStore, label: str, size: dict[str, int]) -> list[Figure]:
    spending = Spending(store, PRICES_MODEL, _Prices())
    asyncio.run(_calls(spending, size["warmup"]))  # each channel's rows opened
    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(_calls(spending, size["calls"]))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    per_call = cpu / size["calls"]
    # The store's part alone: the same statements called in this thread, no hand-off to the
    # store's threads (which every write of a run makes, and which costs most of the rest).
    day, month = periods(datetime.now(UTC))
    bounds = ((day, LIMITS.of("usd")[0]), (month, LIMITS.of("usd")[1]))
    statements = time.process_time()
    for n in range(size["calls"]):
        hold = store.reserve("T0BENCH", f"C0BENCH{n % 20:02d}", "usd", 2_500, bounds, _none)
        assert isinstance(hold, Hold), hold
        store.settle(hold, 1_000, bounds)
    in_store = (time.process_time() - statements) / size["calls"]
    return [
        Figure(
            f"{label}: CPU a model call adds (hold, then usage), {size['calls']:,} calls",
            ms(per_call),
            f"<= {ms(GOAL_SECONDS)}",
            per_call <= GOAL_SECONDS,
        ),
        Figure(f"{label}: of which the store's two transactions", ms(in_store)),
        Figure(f"{label}: wall time a call adds", ms(wall / size["calls"])),
    ]


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = SqlStore(f"sqlite:///{Path(tmp) / 'app.db'}")
        try:
            figures += measure(store, "SQLite", size)
        finally:
            store.close()
    try:
        with scratch_postgres() as url:
            store = SqlStore(url)
            try:
                figures += measure(store, "PostgreSQL", size)
            finally:
                store.close()
    except OperationalError as exc:
        figures.append(Figure("PostgreSQL", f"not measured: {exc.orig}"))
    return figures
