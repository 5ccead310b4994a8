"""Routines: the due ones found among 10,000 on PostgreSQL, each tick.

10,000 routines (cron and one-time, over 3 workspaces and 60 channels), their next_due spread
over the coming 30 days and 20 of them due now, ANALYZEd as autovacuum would. Each tick reads
the due ones (`Store.due_routines`, the goal: at most 5 ms at the median); PostgreSQL's plan
of that query must use the index on next_due, not scan the table (EXPLAIN, shown).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from bench.report import Figure, median, ms
from bench.store import scratch_postgres
from context.storage.routines import _DUE
from context.storage.store import SqlStore
from context.storage.tables import moment, routines_table

FULL = {"routines": 10_000, "ticks": 500}
SMOKE = {"routines": 200, "ticks": 5}
DUE = 20
GOAL_SECONDS = 0.005
INDEX = "ix_routines_next_due"


def rows(count: int, now: datetime) -> list[dict[str, object]]:
    made: list[dict[str, object]] = []
    for n in range(count):
        due = now - timedelta(minutes=n + 1) if n < DUE else now + timedelta(days=30 * n / count)
        once = n % 10 == 0
        made.append(
            {
                "team": f"T0BENCH{n % 3}",
                "channel": f"C0BENCH{n % 60:02d}",
                "prompt": "Summarize what happened since the last run.",
                "creator": f"U0BENCH{n % 500:03d}",
                "cron": None if once else "0 9 * * 1-5",
                "tz": None if once else "Europe/Paris",
                "at": moment(due) if once else None,
                "next_due": moment(due),
                "paused": n % 50 == 7,
                "created_at": moment(now),
            }
        )
    return made


def measure(url: str, size: dict[str, int]) -> list[Figure]:
    store = SqlStore(url)
    try:
        now = datetime.now(UTC)
        engine = store._db.engine
        with engine.begin() as connection:
            connection.execute(routines_table.insert(), rows(size["routines"], now))
            connection.execute(text("ANALYZE routines"))
        at = moment(now)
        found = store.due_routines(at)
        times = []
        for _ in range(size["ticks"]):
            started = time.perf_counter()
            store.due_routines(at)
            times.append(time.perf_counter() - started)
        with engine.connect() as connection:
            # Our own values, written into the text: EXPLAIN takes no bound parameters.
            query = _DUE.params(at=at, limit=100)
            compiled = query.compile(engine, compile_kwargs={"literal_binds": True})
            plan = connection.execute(text(f"EXPLAIN {compiled}")).scalars()
            plan_text = " / ".join(line.strip() for line in plan)
        expected = sum(1 for n in range(min(DUE, size["routines"])) if n % 50 != 7)
        return [
            Figure(
                "routines stored",
                f"{size['routines']:,} ({len(found)} due, paused skipped)",
                f"{expected} due",
                len(found) == expected,
            ),
            Figure(
                "due ones found, per tick (median)",
                ms(median(times)),
                f"<= {ms(GOAL_SECONDS)}",
                median(times) <= GOAL_SECONDS,
            ),
            Figure("due ones found, per tick (max)", ms(max(times))),
            Figure("PostgreSQL's plan", plan_text, f"uses {INDEX}", INDEX in plan_text),
        ]
    finally:
        store.close()


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    try:
        with scratch_postgres() as url:
            return measure(url, size)
    except OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0]
        return [Figure("PostgreSQL", f"not measured: unreachable ({reason})", "runs", False)]
