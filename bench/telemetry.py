"""`python -m bench telemetry`: what OpenTelemetry costs the app. `assistant serve` in its own
process answers mentions, each a new thread answered in two model calls (getThreadHistory,
then postMessage and finishRequest: 1 invoke_agent, 2 chat and 3 execute_tool spans and the
event's span per answer), with tracing off (no OTEL_* variable) and on (OTLP/HTTP to a
loopback receiver decoding every batch, `tests/otlp_receiver.py`; the SDK's default batch
schedule and metric interval); rounds alternate, so the machine's other load falls on both.
The figure: the app's CPU per answered mention, on ÷ off, from the first send until every
run has ended and, tracing on, until the receiver has every run's span: the export of the
spans is counted (the metrics', every 60 s, mostly not; their recording is)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from assistant.fakes import FakeOpenAI, FakeSlack
from bench import conversation
from bench.load import send_events
from bench.model import AnsweringModel
from bench.report import Figure, median, ms
from bench.server import AppServer
from tests.otlp_receiver import OtlpReceiver, Received

# idle: seconds after the answers, both ways (> the batch span processor's 5 s schedule);
# the smoke run, whose figures are not recorded, exports every 50 ms instead.
FULL = {"mentions": 150, "rounds": 5, "concurrency": 10, "idle": 6.0}
SMOKE = {"mentions": 4, "rounds": 1, "concurrency": 2, "idle": 0.5}
GOAL = 1.10


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    count, rounds = int(size["mentions"]), int(size["rounds"])
    cpu: dict[str, list[float]] = {"off": [], "on": []}
    receiver = OtlpReceiver().start()
    model = AnsweringModel(history_every=1)
    try:
        with FakeSlack() as slack, FakeOpenAI(default=model) as fake:
            first = 0
            for _ in range(rounds):
                for mode in ("off", "on"):
                    env = _env(receiver.endpoint, smoke) if mode == "on" else {}
                    cpu[mode].append(_round(slack, fake, model, receiver, first, count, size, env))
                    first += count
        runs = _runs(receiver.received)
    finally:
        receiver.stop()
    off, on = median(cpu["off"]) / count, median(cpu["on"]) / count
    ratio = on / off
    answered = count * rounds
    return [
        Figure(
            "load",
            f"{count} mentions a round, {size['concurrency']} in flight, {rounds} rounds each "
            "way, alternating; 2 model calls an answer, model latency 0",
        ),
        Figure("app CPU per answered mention, tracing off (median of rounds)", ms(off)),
        Figure("app CPU per answered mention, tracing on (median of rounds)", ms(on)),
        Figure("on ÷ off", f"{ratio:.3f}", f"≤ {GOAL:.2f}", ratio <= GOAL),
        Figure(
            "rounds' CPU per mention, off / on",
            " ".join(ms(c / count) for c in cpu["off"])
            + " / "
            + " ".join(ms(c / count) for c in cpu["on"]),
        ),
        Figure("invoke_agent spans received", f"{runs}/{answered}", "all", runs == answered),
    ]


def _runs(received: Received) -> int:
    return sum(1 for span in received.spans if span.name.startswith("invoke_agent"))


def _env(endpoint: str, smoke: bool) -> dict[str, str]:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SERVICE_NAME": "aya-bench"}
    return {**env, "OTEL_BSP_SCHEDULE_DELAY": "50"} if smoke else env


def _round(
    slack: FakeSlack,
    fake: FakeOpenAI,
    model: AnsweringModel,
    receiver: OtlpReceiver,
    first: int,
    count: int,
    size: dict[str, float],
    env: dict[str, str],
) -> float:
    """One app process answering `count` new mentions: its CPU seconds from the first send
    to `size["idle"]` seconds after the last run's end, by when, tracing on, the receiver has
    every run's span (the batch processor sends every 5 s): the spans' export is counted."""
    with (
        tempfile.TemporaryDirectory() as workdir,
        AppServer(slack, fake, Path(workdir), **env) as app,
    ):
        made = conversation.mentions(slack, count, 1, first_thread=first)
        exported = _runs(receiver.received) + count
        before = app.cpu_seconds()
        send_events(app.url, [m.event for m in made], int(size["concurrency"]))
        conversation.wait_answered(slack, model, made, timeout=300)
        idle_until = time.monotonic() + size["idle"]
        if env:
            receiver.wait_for(lambda received: _runs(received) >= exported or None, timeout=60)
        # Both ways the same idle time after the answers: the app's own timers (sweeps,
        # leases) cost the same on both sides of the ratio.
        time.sleep(max(0.0, idle_until - time.monotonic()))
        return app.cpu_seconds() - before
