"""Ack latency in a closed loop: signed mentions over HTTP, a fixed number in flight, while
every model call takes seconds. A secondary measure: with 50 requests in flight the time to an
ack is about 50 x the app's CPU per event (Little's law), so it says more about the sender than
about Slack's traffic; `bench.ack` (an open loop, events at their own times) is the goal's.

"Answered exactly once" here means: every mention's label appears in exactly one
chat.postMessage, posted in the mention's own thread. Mentions that arrive in a thread while
its run is going are folded into that run (its next step sees them), so a thread gets one run
and possibly several replies; what must never happen is a mention with no reply or two.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from assistant.fakes import FakeOpenAI, FakeSlack
from assistant.fakes.events import builders as slack_events
from bench import conversation
from bench.load import Delivery, send_events
from bench.model import AnsweringModel
from bench.report import Figure, median, ms, percentile
from bench.server import AppServer

FULL = {"threads": 100, "per_thread": 5, "concurrency": 50, "latency": 2.0}
SMOKE = {"threads": 3, "per_thread": 2, "concurrency": 3, "latency": 0.05}
P99_GOAL_S = 0.050
MAX_GOAL_S = 1.0


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    threads, per_thread = int(size["threads"]), int(size["per_thread"])
    concurrency = int(size["concurrency"])
    model = AnsweringModel(latency=size["latency"])
    with (
        FakeSlack() as slack,
        FakeOpenAI(default=model) as fake,
        tempfile.TemporaryDirectory() as workdir,
    ):
        with AppServer(slack, fake, Path(workdir)) as app:
            made = conversation.mentions(slack, threads, per_thread)
            started = time.perf_counter()
            deliveries, cpu = _send(app, [m.event for m in made], concurrency)
            # The floor is measured on a quiet app: every run has ended (its reaction is gone;
            # a run's last model call comes after its reply).
            conversation.wait_answered(slack, model, made, timeout=120 + 10 * size["latency"])
            elapsed = time.perf_counter() - started
            plain = [slack_events.message(f"unrelated {n}") for n in range(len(made))]
            floor, floor_cpu = _send(app, plain, concurrency)
        recorded = conversation.recorded_once(app.database_url, made)
        once = conversation.answered_once(slack, made)
        posts = Counter(c.params.get("thread_ts") for c in slack.calls_to("chat.postMessage"))
        runs = len(slack.calls_to("reactions.add"))
        calls = len(fake.requests)

    seconds = [d.seconds for d in deliveries]
    floor_seconds = [d.seconds for d in floor]
    total = len(made)
    ok = sum(1 for d in deliveries if d.status == 200)
    p99, worst = percentile(seconds, 0.99), max(seconds)
    per_thread_posts = [posts.get(m.thread_ts, 0) for m in made[:threads]]
    return [
        Figure(
            "load",
            f"{total} mentions over {threads} threads, concurrency {size['concurrency']}, "
            f"model latency {size['latency']:g} s",
        ),
        Figure("ack p50", ms(median(seconds))),
        Figure("ack p99", ms(p99), f"< {ms(P99_GOAL_S)}", p99 < P99_GOAL_S),
        Figure("ack max", ms(worst), f"< {ms(MAX_GOAL_S)}", worst < MAX_GOAL_S),
        Figure("HTTP 200", f"{ok}/{total}", "all", ok == total),
        Figure(
            "answered exactly once (one reply naming it, in its thread)",
            f"{once}/{total}",
            "all",
            once == total,
        ),
        Figure("recorded once in the log", f"{recorded}/{total}", "all", recorded == total),
        Figure(
            "floor: as many channel messages the app only acknowledges, ack p50 / p99 / max",
            f"{ms(median(floor_seconds))} / {ms(percentile(floor_seconds, 0.99))} / "
            f"{ms(max(floor_seconds))} ({sum(d.status == 200 for d in floor)}/{total} HTTP 200)",
        ),
        Figure(
            f"app CPU per event: mentions / floor (→ times {concurrency} in flight)",
            f"{ms(cpu / total)} / {ms(floor_cpu / total)} "
            f"(→ {ms(concurrency * cpu / total)} / {ms(concurrency * floor_cpu / total)})",
        ),
        Figure(
            "runs / model calls / replies",
            f"{runs} / {calls} / {sum(posts.values())} "
            f"(replies per thread {min(per_thread_posts)}..{max(per_thread_posts)})",
        ),
        Figure(
            "all answered after (÷ model latency)",
            f"{elapsed:.1f} s ({elapsed / size['latency']:.1f}x)",
        ),
    ]


def _send(
    app: AppServer, events: list[dict[str, Any]], concurrency: int
) -> tuple[list[Delivery], float]:
    """The deliveries, and the app's CPU seconds while they were sent."""
    before = app.cpu_seconds()
    deliveries = send_events(app.url, events, concurrency)
    return deliveries, app.cpu_seconds() - before
