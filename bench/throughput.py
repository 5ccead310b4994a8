"""Throughput and memory of the app process (`assistant serve` in a subprocess).

1. Answered mentions per second with zero-latency fakes: mentions in new threads (one run,
   one reply each) sent at concurrency 50 in batches of 500, each batch answered before the
   next is sent, from the first request to the last run's end. Batches keep the runs in flight
   bounded: the app acks far faster than it answers and admits every run at once, so an
   unbounded burst measures its backlog (and Slack-call timeouts), not its throughput. The
   CPU time of the app process and of this one (fakes and sender) shows which was the limit.
2. Idle threads: resident memory (VmRSS) after a warm-up, then after those 10,000 threads
   have been touched and answered and are idle again; the difference per thread.
3. Waiting runs: resident memory while 1,000 runs are all waiting on the model at once (every
   model reply held at the fake until all 1,000 requests have arrived), per waiting run; then
   the app is killed (answering them would measure nothing new).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from assistant.fakes import FakeOpenAI, FakeSlack
from bench import conversation
from bench.load import send_events
from bench.model import AnsweringModel
from bench.report import Figure
from bench.server import AppServer, own_cpu_seconds

FULL = {"warmup": 500, "idle": 10_000, "held": 1_000, "concurrency": 50, "batch": 500}
SMOKE = {"warmup": 5, "idle": 20, "held": 10, "concurrency": 5, "batch": 10}
IDLE_GOAL_BYTES = 1024  # per idle thread: what stays is the database's, not the process's
KIB = 1024


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    model = AnsweringModel()
    with (
        FakeSlack() as slack,
        FakeOpenAI(default=model) as fake,
        tempfile.TemporaryDirectory() as workdir,
        AppServer(slack, fake, Path(workdir)) as app,
    ):
        threads = 0

        def answer(count: int) -> float:
            """Mentions in `count` new threads, a batch at a time, each answered before the
            next batch; returns the seconds it took."""
            nonlocal threads
            made = conversation.mentions(slack, count, 1, first_thread=threads)
            threads += count
            started = time.perf_counter()
            for first in range(0, count, size["batch"]):
                batch = made[first : first + size["batch"]]
                send_events(app.url, [m.event for m in batch], size["concurrency"])
                conversation.wait_answered(slack, model, batch, timeout=120)
            return time.perf_counter() - started

        answer(size["warmup"])
        rss_warm = app.rss_bytes()
        cpu_app, cpu_own = app.cpu_seconds(), own_cpu_seconds()
        elapsed = answer(size["idle"])
        cpu_app, cpu_own = app.cpu_seconds() - cpu_app, own_cpu_seconds() - cpu_own
        rss_idle = app.rss_bytes()

        model.hold_replies()
        made = conversation.mentions(slack, size["held"], 1, first_thread=threads)
        before = len(fake.requests)
        send_events(app.url, [m.event for m in made], size["concurrency"])
        fake.wait_for_requests(before + size["held"], timeout=120)
        rss_held = app.rss_bytes()
        # Measured: the app need not answer them (that would only add a minute to the run).
        app.kill()
        model.release_all()

    rate = size["idle"] / elapsed
    per_idle = (rss_idle - rss_warm) / size["idle"]
    per_held = (rss_held - rss_idle) / size["held"]
    return [
        Figure(
            "answered mentions per second (zero-latency fakes, new threads)",
            f"{rate:.0f}/s ({size['idle']:,} in {elapsed:.1f} s, concurrency "
            f"{size['concurrency']}, batches of {size['batch']})",
        ),
        Figure(
            "CPU per answered mention: app process / fakes + sender",
            f"{cpu_app / size['idle'] * 1000:.2f} ms / {cpu_own / size['idle'] * 1000:.2f} ms "
            f"(app busy {cpu_app / elapsed:.0%} of one core)",
        ),
        Figure(
            f"RSS after warm-up ({size['warmup']} threads) → after {size['idle']:,} more "
            "idle threads",
            f"{rss_warm / KIB**2:.1f} MiB → {rss_idle / KIB**2:.1f} MiB",
        ),
        Figure(
            "RSS per idle thread",
            f"{per_idle:,.0f} bytes",
            f"≤ {IDLE_GOAL_BYTES:,} bytes",
            per_idle <= IDLE_GOAL_BYTES,
        ),
        Figure(
            f"RSS with {size['held']:,} runs waiting on the model",
            f"{rss_held / KIB**2:.1f} MiB (+{per_held / KIB:.1f} KiB per waiting run)",
        ),
    ]
