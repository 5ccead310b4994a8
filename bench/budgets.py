"""The spend limits' cost to a model call (docs/operations.md#spend-limits): the CPU the
budget check adds to each call of a channel with a budget, on SQLite and on PostgreSQL.

Each call is what the step loop does around a model call (`assistant.run.core.spend.Spending`,
as the app builds it): its worst case held in the channel's daily and monthly budgets (one
write through the store's threads), then the write that records the reply's usage (the
reply's first entry, `Store.append`) counting it in place of the hold in the same
transaction (`Settlement`), then `Spending.settle`, which finds it counted. What a call adds
is that, less the same usage write with no budget (which every call makes anyway): blocks of
each in turn, so that the log's growth and the machine's load weigh on both alike. Process
CPU time (every thread: the driver, SQLAlchemy, the executor), divided by the calls; the
budget is large enough that no call is refused, as in a channel running normally. The goal:
at most 0.5 ms of CPU a call. PostgreSQL's own work is the server's, not the app's: its
figure is this process's share only.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.exc import OperationalError

from assistant.model.completion import ModelReply
from assistant.run.core.spend import CallHold, Held, Spending
from assistant.run.streaming.step import usage_of
from bench.report import Figure, ms
from bench.store import scratch_postgres
from context.entry import UserContent
from context.spend import Hold, Settlement, SpendLimits, periods
from context.storage import ThreadKey
from context.storage.async_store import async_store
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
REPLY = ModelReply(
    model=PRICES_MODEL, prompt_tokens=2_000, cached_tokens=0, completion_tokens=60, latency_ms=900.0
)
ENTRY = "a reply's first entry"
STAMP = "2026-11-29T12:00:00Z"


def _none(model: str | None, prompt: int, cached: int, completion: int) -> int:
    return 0


BLOCK = 50  # calls with a budget, then as many without, in turn
USAGE = usage_of(REPLY)


def _where(n: int) -> tuple[str, ThreadKey]:
    channel = f"C0BENCH{n % 20:02d}"  # a few channels, as a busy workspace has
    return channel, ThreadKey("T0BENCH", channel, f"{n % 20}.000001")


async def _budgeted(spending: Spending, first: int, count: int) -> None:
    store = async_store(spending.store)
    for n in range(first, first + count):
        channel, key = _where(n)
        held = await spending.reserve("T0BENCH", channel, LIMITS, None, 2_000, 4_000)
        assert isinstance(held, Held), held
        hold = CallHold()
        hold.start(spending, held)
        settle = hold.take(USAGE)
        await store.write(spending.store.append, key, ENTRY, STAMP, USAGE, settle=settle)
        taken = hold.end()
        await spending.settle(held, REPLY, None, LIMITS, "T0BENCH", channel, taken)


async def _apart(spending: Spending, first: int, count: int) -> None:
    """As before issue 47's second pass: the usage counted in a write of its own after the
    usage write (the same figures, for comparison at the machine's load of the run)."""
    store = async_store(spending.store)
    for n in range(first, first + count):
        channel, key = _where(n)
        held = await spending.reserve("T0BENCH", channel, LIMITS, None, 2_000, 4_000)
        assert isinstance(held, Held), held
        await store.write(spending.store.append, key, ENTRY, STAMP, USAGE)
        await spending.settle(held, REPLY, None, LIMITS, "T0BENCH", channel)


async def _unbudgeted(spending: Spending, first: int, count: int) -> None:
    store = async_store(spending.store)
    for n in range(first, first + count):
        _, key = _where(n)
        await store.write(spending.store.append, key, ENTRY, STAMP, USAGE)


async def _turns(spending: Spending, count: int) -> dict[str, float]:
    """CPU over `count` calls of each way (with the usage counted in its write, apart, with
    no budget), and the wall time of the first."""
    took = dict.fromkeys(("with", "apart", "without", "wall"), 0.0)
    for first in range(0, count, BLOCK):
        size = min(BLOCK, count - first)
        for name, calls in (("with", _budgeted), ("apart", _apart), ("without", _unbudgeted)):
            cpu, wall = time.process_time(), time.perf_counter()
            await calls(spending, first, size)
            took[name] += time.process_time() - cpu
            if name == "with":
                took["wall"] += time.perf_counter() - wall
    return took


def _in_store(store: SqlStore, count: int) -> float:
    """The store's part alone: the same statements called in this thread, no hand-off to the
    store's threads (which every write of a run makes), less the usage write's own."""
    day, month = periods(datetime.now(UTC))
    bounds = ((day, LIMITS.of("usd")[0]), (month, LIMITS.of("usd")[1]))
    added = 0.0
    for n in range(count):
        channel, key = _where(n)
        started = time.process_time()
        hold = store.reserve("T0BENCH", channel, "usd", 2_500, bounds, _none)
        assert isinstance(hold, Hold), hold
        store.append(key, ENTRY, STAMP, USAGE, settle=Settlement(hold, 1_000, bounds))
        middle = time.process_time()
        store.append(key, ENTRY, STAMP, USAGE)
        added += 2 * middle - started - time.process_time()
    return added / count


def measure(store: SqlStore, label: str, size: dict[str, int]) -> list[Figure]:
    spending = Spending(store, PRICES_MODEL, _Prices())
    for n in range(20):
        _, key = _where(n)
        store.append(key, UserContent(userid="<@U0BENCH>", text="hi"), STAMP)
    asyncio.run(_turns(spending, size["warmup"]))  # each channel's rows opened
    took = asyncio.run(_turns(spending, size["calls"]))
    calls = size["calls"]
    per_call = (took["with"] - took["without"]) / calls
    in_store = _in_store(store, calls)
    return [
        Figure(
            f"{label}: CPU a model call adds (hold, usage counted in its write), {calls:,} calls",
            ms(per_call),
            f"<= {ms(GOAL_SECONDS)}",
            per_call <= GOAL_SECONDS,
        ),
        Figure(
            f"{label}: the same, the usage counted in a write of its own (as before)",
            ms((took["apart"] - took["without"]) / calls),
        ),
        Figure(f"{label}: of which the store's statements", ms(in_store)),
        Figure(
            f"{label}: the usage write alone (every call, budget or not)",
            ms(took["without"] / calls),
        ),
        Figure(f"{label}: wall time of a call's hold and usage write", ms(took["wall"] / calls)),
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
