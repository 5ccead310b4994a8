"""Ingress and workers on one PostgreSQL (issue 26): `serve --runs off` acknowledges, `assistant
worker` processes answer, all on this machine's cores (shared with the fakes and the sender).

1. Capacity: `bench.ack`'s search (Poisson arrivals, 20% mentions, windows at doubling
   rates, p99 < 100 ms) on the ingress alone (its mentions left owed), on the ingress while 2
   workers answer them (the whole system on these cores), and on the bare Bolt app, in the
   same run; every mention answered once at the end.
2. Answered mentions per second with 1, 2 and 4 workers, model latency 0: mentions sent
   through the ingress 20 at a time, from the first send to the last answer.
3. From an event's acknowledgement to its run's first model call, one mention at a time on
   an idle system: `serve` doing both, and ingress + worker (woken by NOTIFY).
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from assistant.fakes import FakeOpenAI, FakeSlack
from bench import conversation
from bench.ack import SEARCH_P99_S, Search, Traffic, Window, _rate, highest_rate
from bench.bare_app import BareBoltServer
from bench.load import send_events, send_open_loop
from bench.model import AnsweringModel
from bench.report import Figure, median, ms, percentile
from bench.server import AppServer, Worker
from bench.store import scratch_postgres

FULL = {"window": 8.0, "start": 50.0, "ceiling": 6_400.0, "mentions": 200, "latency_n": 20}
SMOKE = {"window": 0.5, "start": 20.0, "ceiling": 40.0, "mentions": 4, "latency_n": 2}
WORKER_COUNTS = (1, 2, 4)
CAPACITY_WORKERS = 2
RELATIVE_GOAL = 0.8
ANSWER_TIMEOUT = 600.0


class TimedModel(AnsweringModel):
    """An `AnsweringModel` that notes when each request arrived (perf_counter)."""

    def __init__(self) -> None:
        super().__init__(one_call=True)
        self.arrivals: list[float] = []

    def __call__(self, body: dict[str, Any]) -> Any:
        self.arrivals.append(time.perf_counter())
        return super().__call__(body)


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    model = TimedModel()
    spawn = multiprocessing.get_context("spawn")
    with (
        FakeSlack() as slack,
        FakeOpenAI(default=model) as fake,
        tempfile.TemporaryDirectory() as tmp,
        ProcessPoolExecutor(1, mp_context=spawn) as sender,
        scratch_postgres() as url,
    ):
        workdir = Path(tmp)
        traffic = Traffic(slack)
        refused: set[str] = set()  # event ids not acknowledged (503 past the connection cap)

        def search(app: Any, cpu: Any) -> Search:
            def measure(rate: float) -> Window:
                arrivals = traffic.arrivals(rate, size["window"])
                before = cpu()
                deliveries = sender.submit(send_open_loop, app.url, arrivals).result()
                refused.update(
                    a.payload["event"]["ts"]
                    for a, d in zip(arrivals, deliveries, strict=True)
                    if d.status != 200
                )
                return Window(rate, deliveries, cpu() - before)

            return highest_rate(measure, size["start"], size["ceiling"])

        with AppServer(slack, fake, workdir, runs="off", DATABASE_URL=url) as ingress:
            alone = search(ingress, ingress.cpu_seconds)
            with ExitStack() as stack:
                workers = [
                    stack.enter_context(Worker(slack, fake, workdir / f"c{n}", url))
                    for n in range(CAPACITY_WORKERS)
                ]
                both = search(ingress, ingress.cpu_seconds)
                # Those Slack would send again are not the app's yet: only the acknowledged.
                acked = [m for m in traffic.mentions if m.event["ts"] not in refused]
                conversation.wait_answered(slack, model, acked, ANSWER_TIMEOUT)
                once = conversation.answered_once(slack, acked)
                workers_cpu = sum(w.cpu_seconds() for w in workers)
            rates = {
                n: throughput(slack, fake, model, ingress, workdir, url, n, size)
                for n in WORKER_COUNTS
            }
            with Worker(slack, fake, workdir / "latency", url):
                split_latency = ack_to_model(slack, model, ingress, int(size["latency_n"]), 10_000)
        with BareBoltServer(slack) as bare:
            bare_best = search(bare, bare.cpu_seconds)
        (workdir / "both").mkdir()
        with AppServer(slack, fake, workdir / "both", DATABASE_URL=url) as serve:
            serve_latency = ack_to_model(slack, model, serve, int(size["latency_n"]), 20_000)
    made = len(acked)
    return figures(
        alone, both, bare_best, once, made, workers_cpu, rates, split_latency, serve_latency
    )


def throughput(
    slack: FakeSlack,
    fake: FakeOpenAI,
    model: AnsweringModel,
    ingress: AppServer,
    workdir: Path,
    url: str,
    count: int,
    size: dict[str, float],
) -> float:
    """Answered mentions per second with `count` workers, from the first send."""
    made = conversation.mentions(slack, int(size["mentions"]), 1, first_thread=count * 100_000)
    with ExitStack() as stack:
        for n in range(count):
            stack.enter_context(Worker(slack, fake, workdir / f"t{count}-{n}", url))
        started = time.perf_counter()
        send_events(ingress.url, [m.event for m in made], concurrency=20)
        conversation.wait_answered(slack, model, made, ANSWER_TIMEOUT)
        seconds = time.perf_counter() - started
    assert conversation.answered_once(slack, made) == len(made)
    return len(made) / seconds


def ack_to_model(
    slack: FakeSlack, model: TimedModel, app: AppServer, count: int, first: int
) -> list[float]:
    """For `count` mentions one at a time: seconds from the ack's arrival to the model call
    (negative: the run called the model before the response reached the sender)."""
    gaps = []
    for number in range(count):
        (made,) = conversation.mentions(slack, 1, 1, first_thread=first + number)
        calls = len(model.arrivals)
        (delivery,) = send_events(app.url, [made.event], concurrency=1)
        acked = time.perf_counter()
        assert delivery.status == 200
        conversation.wait_answered(slack, model, [made], ANSWER_TIMEOUT)
        gaps.append(model.arrivals[calls] - acked)
    return gaps


def figures(
    alone: Search,
    both: Search,
    bare: Search,
    once: int,
    made: int,
    workers_cpu: float,
    rates: dict[int, float],
    split: list[float],
    serve: list[float],
) -> list[Figure]:
    ratio = alone.best / bare.best if bare.best else 0.0
    whole = both.best / bare.best if bare.best else 0.0
    limit = f"p99 < {ms(SEARCH_P99_S)}"
    return [
        Figure("machine", f"load average {os.getloadavg()[0]:.1f} at the end; PostgreSQL local"),
        Figure(f"highest rate with {limit}: ingress alone (mentions left owed)", _rate(alone)),
        Figure(
            f"highest rate with {limit}: ingress + {CAPACITY_WORKERS} workers answering",
            _rate(both),
        ),
        Figure(f"highest rate with {limit}: bare Bolt app", _rate(bare)),
        Figure(
            "ingress alone ÷ bare Bolt app",
            f"{ratio:.2f}",
            f"≥ {RELATIVE_GOAL}",
            ratio >= RELATIVE_GOAL,
        ),
        Figure(
            f"ingress + {CAPACITY_WORKERS} workers (whole system on these cores) ÷ bare",
            f"{whole:.2f}",
        ),
        Figure(
            "mentions of the searches answered exactly once", f"{once}/{made}", "all", once == made
        ),
        Figure("workers' CPU over the searches", f"{workers_cpu:.1f} s"),
        *[
            Figure(f"answered mentions per second, {n} worker(s), model latency 0", f"{r:.1f}")
            for n, r in rates.items()
        ],
        Figure(
            "ack → the run's first model call, median / p90: serve (both) / ingress + worker",
            f"{ms(median(serve))} / {ms(percentile(serve, 0.9))} ; "
            f"{ms(median(split))} / {ms(percentile(split, 0.9))}",
        ),
    ]
