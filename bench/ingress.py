"""The ingress's capacity alone: the first and the bare-app searches of `bench.workers`.

`python -m bench ingress`. `serve --runs off` on a scratch PostgreSQL, its mentions left owed
(no worker runs), and the bare Bolt app, each searched as `bench.ack` does (Poisson arrivals,
20% mentions, 8 s windows at doubling rates, p99 < 100 ms), in the same run: the goal's ratio
without the rest of `workers` (its answers with 1, 2 and 4 workers, its latencies), whose waits
for every answer take minutes.

Then the bare app again, writing each mention's body to the same PostgreSQL before its ack
(one INSERT, `bench.bare_app`): the most an ingress reaches that records a mention before
acknowledging it, whatever else it does or does not do. Its ratio to the bare app is the
bound over the goal's.
"""

from __future__ import annotations

import multiprocessing
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from sqlalchemy import Table, create_engine, func, select

from assistant.fakes import FakeOpenAI, FakeSlack
from bench.ack import SEARCH_P99_S, Search, Traffic, Window, _rate, highest_rate
from bench.bare_app import INBOX, BareBoltServer
from bench.load import send_open_loop
from bench.report import Figure, ms
from bench.server import AppServer
from bench.store import scratch_postgres
from bench.workers import FULL, RELATIVE_GOAL, SMOKE, TimedModel


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    spawn = multiprocessing.get_context("spawn")
    with (
        FakeSlack() as slack,
        FakeOpenAI(default=TimedModel()) as fake,
        tempfile.TemporaryDirectory() as tmp,
        ProcessPoolExecutor(1, mp_context=spawn) as sender,
        scratch_postgres() as url,
    ):
        traffic = Traffic(slack)
        acknowledged = [0]  # the mentions the writing bare app answered 200

        def search(app: Any, count: list[int] | None = None) -> Search:
            def measure(rate: float) -> Window:
                arrivals = traffic.arrivals(rate, size["window"])
                before = app.cpu_seconds()
                deliveries = sender.submit(send_open_loop, app.url, arrivals).result()
                if count is not None:
                    count[0] += sum(
                        a.payload["event"]["type"] == "app_mention" and d.status == 200
                        for a, d in zip(arrivals, deliveries, strict=True)
                    )
                return Window(rate, deliveries, app.cpu_seconds() - before)

            return highest_rate(measure, size["start"], size["ceiling"])

        with AppServer(slack, fake, Path(tmp), runs="off", DATABASE_URL=url) as ingress:
            alone = search(ingress)
        with BareBoltServer(slack) as bare:
            bare_best = search(bare)
        with BareBoltServer(slack, database_url=url) as writing:
            writing_best = search(writing, acknowledged)
        written = _rows(url, INBOX)
    if written != acknowledged[0]:
        # Its bound means nothing unless each mention it acknowledged was written.
        raise AssertionError(
            f"the writing bare app wrote {written} mentions, acknowledged {acknowledged[0]}"
        )
    ratio = alone.best / bare_best.best if bare_best.best else 0.0
    bound = writing_best.best / bare_best.best if bare_best.best else 0.0
    limit = f"p99 < {ms(SEARCH_P99_S)}"
    return [
        Figure(f"highest rate with {limit}: ingress alone (mentions left owed)", _rate(alone)),
        Figure(f"highest rate with {limit}: bare Bolt app", _rate(bare_best)),
        Figure(
            "ingress alone ÷ bare Bolt app",
            f"{ratio:.2f}",
            f"≥ {RELATIVE_GOAL}",
            ratio >= RELATIVE_GOAL,
        ),
        Figure(
            f"highest rate with {limit}: bare Bolt app writing each mention (one INSERT)",
            _rate(writing_best),
        ),
        Figure("mentions the writing bare app acknowledged, each written", str(written)),
        Figure(
            "bare app writing each mention ÷ bare Bolt app: the bound over the ratio",
            f"{bound:.2f}",
        ),
    ]


def _rows(url: str, table: Table) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return connection.scalar(select(func.count()).select_from(table)) or 0
    finally:
        engine.dispose()
