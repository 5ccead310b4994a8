"""`assistant usage` over 100,000 threads, on SQLite and on PostgreSQL.

The store is filled in bulk with what the app leaves after answering (per thread: the
persona, a person's message, a postMessage carrying the model call's figures, a finishRequest
that ends the run; every third thread a second exchange of two calls), over 30 days, 3
workspaces, 60 channels, 500 people and 2 models. Then the real command runs, as an operator
would run it (a subprocess, `--json`), for the whole store and for the last 7 days, by each
grouping, and its query alone (`Store.usage`, the goal: at most 1 s each); the command's wall
time includes Python's start and the store's opening. Its totals are checked against what was
written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, create_engine
from sqlalchemy.exc import OperationalError

from bench.report import Figure, median, ms
from bench.store import scratch_postgres
from context.storage import database_url
from context.storage.store import SqlStore
from context.storage.tables import entries_table, moment, threads_table

FULL = {"threads": 100_000, "repeats": 3}
SMOKE = {"threads": 300, "repeats": 1}
GROUPINGS = (None, "workspace", "channel", "user", "day", "model")
# One report's query on 100,000 threads. The command's own start (Python, the CLI's imports,
# the store's opening) is reported beside it, not held to the goal: it does not grow with the
# store, and on a shared machine it swings by seconds.
GOAL_SECONDS = 1.0
MODELS = ("gpt-4o-mini-2024-07-18", "gpt-4o")
# One call's figures (input, cached, output), and a second exchange's two calls.
FIRST, SECOND = (1800, 1536, 60), ((2400, 1792, 40), (2500, 2304, 12))
BATCH = 5_000
ROOT = Path(__file__).resolve().parent.parent


def threads(count: int, now: datetime) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Each thread's row and its entries' rows, as the app's store would have them."""
    for n in range(count):
        at = now - timedelta(days=30 * n / count, seconds=1)
        stamp, team = moment(at), f"T0BENCH{n % 3}"
        thread = {
            "id": n + 1,
            "team": team,
            "channel": f"C0BENCH{n % 60:02d}",
            "thread_ts": f"{1_700_000_000 + n}.000100",
            "created_at": stamp,
            "updated_at": stamp,
        }
        person, model = f"U0BENCH{n % 500:03d}", MODELS[n % 7 == 0]
        rows = [
            entry(n, 0, "system", stamp, None),
            entry(n, 1, "user", stamp, person),
            entry(n, 2, "assistant", stamp, person, model, FIRST),
            entry(n, 3, "assistant", stamp, person, ends_run=True),
        ]
        if n % 3 == 0:  # a follow-up: a post, then a second call that finishes
            rows += [
                entry(n, 4, "user", stamp, person),
                entry(n, 5, "assistant", stamp, person, model, SECOND[0]),
                entry(n, 6, "assistant", stamp, person, model, SECOND[1], ends_run=True),
            ]
        thread["next_index"] = len(rows)
        yield thread, rows


def entry(
    thread: int,
    index: int,
    role: str,
    stamp: str,
    person: str | None,
    model: str | None = None,
    figures: tuple[int, int, int] | None = None,
    ends_run: bool = False,
) -> dict[str, Any]:
    prompt, cached, completion = figures or (None, None, None)
    return {
        "thread_id": thread + 1,
        "idx": index,
        "role": role,
        "turn": 0,
        "timestamp": stamp[:19] + "Z",
        "content_json": "{}",
        "recorded_at": stamp,
        "model": model,
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "completion_tokens": completion,
        "latency_ms": 800.0 if figures else None,
        "person": person,
        "ends_run": ends_run,
    }


def fill(url: str, count: int, now: datetime) -> dict[str, int]:
    """Write `count` threads in bulk; the totals written, to check the report against."""
    SqlStore(url).close()  # the schema, migrated as the app would
    engine = create_engine(database_url(url))
    totals = dict.fromkeys(("calls", "answers", "input_tokens", "output_tokens"), 0)
    try:
        with engine.begin() as connection:
            batch: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
            for thread, rows in threads(count, now):
                batch[0].append(thread)
                batch[1].extend(rows)
                for row in rows:
                    totals["calls"] += row["latency_ms"] is not None
                    totals["answers"] += row["ends_run"]
                    totals["input_tokens"] += row["prompt_tokens"] or 0
                    totals["output_tokens"] += row["completion_tokens"] or 0
                if len(batch[0]) >= BATCH:
                    write(connection, *batch)
                    batch = ([], [])
            write(connection, *batch)
    finally:
        engine.dispose()
    return totals


def write(
    connection: Connection, thread_rows: list[dict[str, Any]], entry_rows: list[dict[str, Any]]
) -> None:
    if thread_rows:
        connection.execute(threads_table.insert(), thread_rows)
        connection.execute(entries_table.insert(), entry_rows)


def usage(url: str, *args: str) -> tuple[float, dict[str, Any]]:
    """One run of the real command: its wall time and its report."""
    env = {**os.environ, "DATABASE_URL": url, "PYTHONPATH": str(ROOT)}
    env.pop("ASSISTANT_PRICES", None)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "assistant.cli", "usage", "--json", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
        check=True,
    )
    return time.perf_counter() - started, json.loads(done.stdout)


def command_time(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "assistant.cli", *args], capture_output=True, check=True)
    return time.perf_counter() - started


def timed(function: Callable[..., object], *args: object) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def measure(url: str, label: str, size: dict[str, int], smoke: bool) -> list[Figure]:
    now, repeats = datetime.now(UTC), size["repeats"]
    started = time.perf_counter()
    written = fill(url, size["threads"], now)
    filled = time.perf_counter() - started
    figures = [Figure(f"{label}: {size['threads']:,} threads written in bulk", f"{filled:.1f} s")]
    _, whole = usage(url)
    found = {name: whole["total"][name] for name in written}
    figures.append(
        Figure(
            f"{label}: the report's totals are what was written",
            "yes" if found == written else f"no: {found} != {written}",
            "identical",
            found == written,
        )
    )
    groupings = GROUPINGS if not smoke else (None, "channel")
    windows = ((), ("--since", "7d")) if not smoke else ((),)
    store = SqlStore(url)
    try:
        for window in windows:
            since = now - timedelta(days=7) if window else None
            alone = {
                by or "total": median([timed(store.usage, by, since) for _ in range(repeats)])
                for by in groupings
            }
            shown = ", ".join(f"{name} {ms(value)}" for name, value in alone.items())
            figures.append(
                Figure(
                    f"{label}: the query (`Store.usage`), {'last 7 days' if window else 'all'}, "
                    f"by each grouping, median of {repeats}",
                    shown,
                    f"≤ {ms(GOAL_SECONDS)} each",
                    max(alone.values()) <= GOAL_SECONDS,
                )
            )
    finally:
        store.close()
    floor = median([command_time("--version") for _ in range(repeats)])
    for window in windows:
        whole = {
            by or "total": median(
                [usage(url, *window, *(("--by", by) if by else ()))[0] for _ in range(repeats)]
            )
            for by in groupings
        }
        shown = ", ".join(f"{name} {ms(value)}" for name, value in whole.items())
        figures.append(
            Figure(
                f"{label}: `assistant usage {' '.join(window) or '(all)'} --json [--by …]`, "
                f"the whole command (floor: `assistant --version` {ms(floor)})",
                shown,
            )
        )
    return figures


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory() as tmp:
        figures += measure(f"sqlite:///{Path(tmp) / 'usage.db'}", "SQLite", size, smoke)
    try:
        with scratch_postgres() as url:
            figures += measure(url, "PostgreSQL", size, smoke)
    except OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0]
        figures.append(Figure("PostgreSQL", f"not measured: unreachable ({reason})", "runs", False))
    return figures
