"""Ack latency in an open loop: events arrive on their own schedule, as Slack's traffic does.

Slack retries an event that is not acknowledged within 3 seconds, so the time to the HTTP
response is what decides double deliveries. Events arrive at Poisson times at a fixed rate:
80% channel messages the app only acknowledges, 20% mentions, each in a thread of its own,
answered by a model that takes 2 s; meanwhile 200 more runs wait on the model all along (their
replies held until the end). Each event's time runs from its scheduled arrival to the whole
response, so a sender that falls behind counts against the figure; the sender runs in a process
of its own, the app in another, the fakes in this one.

1. 60 s at 50 events a second: ack p50 / p99 / max; every mention answered once.
2. The highest rate whose p99 stays under 100 ms: windows of 8 s, doubling the rate from 50
   while it holds, then two halvings of the interval between the last rate that held and the
   first that did not. The same search, in the same run, on a bare Bolt app (one listener that
   does nothing, the same Starlette + uvicorn stack: `bench.bare_app`): the framework's
   ceiling on one process, against which ours is compared.

The closed-loop measure (a fixed number of requests in flight) is `bench.ack_closed`.
"""

from __future__ import annotations

import multiprocessing
import random
import tempfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from assistant.fakes import FakeOpenAI, FakeSlack
from assistant.fakes.events import builders as slack_events
from bench import conversation, texts
from bench.bare_app import BareBoltServer
from bench.conversation import Mention
from bench.load import Arrival, Timed, poisson_times, send_events, send_open_loop
from bench.model import AnsweringModel
from bench.report import Figure, median, ms, percentile
from bench.server import AppServer
from tests.harness import mention

FULL = {"rate": 50.0, "seconds": 60.0, "background": 200, "latency": 2.0, "window": 8.0}
SMOKE = {"rate": 20.0, "seconds": 0.5, "background": 3, "latency": 0.05, "window": 0.5}
FULL_CEILING, SMOKE_CEILING = 6_400.0, 40.0  # never try a rate above this
HALVINGS = 2
MENTION_SHARE = 0.2
P99_GOAL_S, MAX_GOAL_S = 0.050, 1.0
SEARCH_P99_S = 0.100
RELATIVE_GOAL = 0.8  # ours, of the bare app's highest rate
HELD_TIMEOUT_S = 900


@dataclass(frozen=True)
class Window:
    rate: float
    deliveries: list[Timed]
    cpu: float  # the app's CPU seconds meanwhile

    @property
    def p99(self) -> float:
        return percentile([d.seconds for d in self.deliveries], 0.99)

    def summary(self) -> str:
        seconds = [d.seconds for d in self.deliveries]
        ok = sum(1 for d in self.deliveries if d.status == 200)
        return (
            f"{ms(median(seconds))} / {ms(percentile(seconds, 0.99))} / {ms(max(seconds))} "
            f"({ok}/{len(seconds)} HTTP 200)"
        )


class Traffic:
    """The events of the open loop; every mention starts a thread of its own, labelled."""

    def __init__(self, slack: FakeSlack, seed: int = 7) -> None:
        self.slack = slack
        self.rng = random.Random(seed)
        self.mentions: list[Mention] = []
        self.plain = 0

    def arrivals(self, rate: float, seconds: float) -> list[Arrival]:
        made = []
        for at in poisson_times(rate, seconds, self.rng):
            if self.rng.random() < MENTION_SHARE:
                label = texts.tag(len(self.mentions), 0)
                event = mention(self.slack, texts.user_text(self.rng, label))
                self.mentions.append(Mention(label, event["ts"], event))
            else:
                self.plain += 1
                event = slack_events.message(f"unrelated {self.plain}")
            made.append(Arrival.of(at, event))
        return made


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    ceiling = SMOKE_CEILING if smoke else FULL_CEILING
    model = AnsweringModel(latency=size["latency"], one_call=True)
    spawn = multiprocessing.get_context("spawn")
    with (
        FakeSlack() as slack,
        FakeOpenAI(default=model) as fake,
        tempfile.TemporaryDirectory() as workdir,
        ProcessPoolExecutor(1, mp_context=spawn) as sender,
    ):
        traffic = Traffic(slack)

        def measure(url: str, cpu: Callable[[], float], rate: float, seconds: float) -> Window:
            arrivals = traffic.arrivals(rate, seconds)
            before = cpu()
            deliveries = sender.submit(send_open_loop, url, arrivals).result()
            return Window(rate, deliveries, cpu() - before)

        # The held runs wait longer than the model client's default timeout allows.
        with AppServer(slack, fake, Path(workdir), OPENAI_TIMEOUT=str(HELD_TIMEOUT_S)) as app:
            try:
                background = hold_runs(app, slack, model, fake, int(size["background"]))
                main = measure(app.url, app.cpu_seconds, size["rate"], size["seconds"])
                ours = highest_rate(
                    lambda r: measure(app.url, app.cpu_seconds, r, size["window"]),
                    size["rate"],
                    ceiling,
                )
            finally:
                model.release_all()  # else the app's shutdown waits on the held runs
            made = background + traffic.mentions
            conversation.wait_answered(slack, model, made, timeout=120 + 10 * size["latency"])
            once = conversation.answered_once(slack, made)
        with BareBoltServer(slack) as bare:
            bare_best = highest_rate(
                lambda r: measure(bare.url, bare.cpu_seconds, r, size["window"]),
                size["rate"],
                ceiling,
            )
    return figures(size, main, ours, bare_best, once, len(made))


def hold_runs(
    app: AppServer, slack: FakeSlack, model: AnsweringModel, fake: FakeOpenAI, count: int
) -> list[Mention]:
    """`count` runs, each in a thread of its own, all waiting on the model until released."""
    made = conversation.mentions(slack, count, 1, first_thread=90_000)
    model.hold_replies()
    send_events(app.url, [m.event for m in made], concurrency=50)
    fake.wait_for_requests(count, timeout=120)
    model.stop_holding()
    return made


@dataclass(frozen=True)
class Search:
    best: float  # the highest rate tried whose p99 held; 0 when none did
    tried: list[Window]


def highest_rate(measure: Callable[[float], Window], start: float, ceiling: float) -> Search:
    """Every rate in windows of the same length, so that their p99s compare."""
    tried: list[Window] = []

    def holds(rate: float) -> bool:
        window = measure(rate)
        tried.append(window)
        return window.p99 < SEARCH_P99_S

    good, bad, rate = 0.0, None, start
    while rate <= ceiling:
        if not holds(rate):
            bad = rate
            break
        good, rate = rate, rate * 2
    for _ in range(HALVINGS if bad is not None else 0):
        assert bad is not None  # as the range says
        middle = round((good + bad) / 2)
        if middle in (good, bad):
            break
        if holds(middle):
            good = middle
        else:
            bad = middle
    return Search(good, tried)


def figures(
    size: dict[str, float], main: Window, ours: Search, bare: Search, once: int, mentions: int
) -> list[Figure]:
    seconds = [d.seconds for d in main.deliveries]
    p99, worst = percentile(seconds, 0.99), max(seconds)
    events = len(main.deliveries)
    late = max(d.late for d in main.deliveries)
    late_search = max(d.late for w in (*ours.tried, *bare.tried) for d in w.deliveries)
    ratio = ours.best / bare.best if bare.best else 0.0
    return [
        Figure(
            "load",
            f"Poisson arrivals at {size['rate']:g} events/s for {size['seconds']:g} s "
            f"({events} events, {MENTION_SHARE:.0%} mentions), model latency "
            f"{size['latency']:g} s, {size['background']:g} more runs waiting on the model",
        ),
        Figure(f"ack p50 at {size['rate']:g}/s", ms(median(seconds))),
        Figure(f"ack p99 at {size['rate']:g}/s", ms(p99), f"< {ms(P99_GOAL_S)}", p99 < P99_GOAL_S),
        Figure(
            f"ack max at {size['rate']:g}/s", ms(worst), f"< {ms(MAX_GOAL_S)}", worst < MAX_GOAL_S
        ),
        Figure(
            "HTTP 200",
            f"{sum(d.status == 200 for d in main.deliveries)}/{events}",
            "all",
            all(d.status == 200 for d in main.deliveries),
        ),
        Figure(
            "app CPU per event (share of one core busy)",
            f"{ms(main.cpu / events)} ({main.cpu / size['seconds']:.0%})",
        ),
        Figure(
            f"sender: latest departure after its scheduled time, at {size['rate']:g}/s / "
            "in the searches",
            f"{ms(max(late, 0.0))} / {ms(max(late_search, 0.0))}",
        ),
        Figure(
            "every mention answered exactly once (one reply naming it, in its thread)",
            f"{once}/{mentions}",
            "all",
            once == mentions,
        ),
        Figure(f"highest rate with p99 < {ms(SEARCH_P99_S)}: ours", _rate(ours)),
        Figure(f"highest rate with p99 < {ms(SEARCH_P99_S)}: bare Bolt app", _rate(bare)),
        Figure(
            "ours ÷ bare Bolt app",
            f"{ratio:.2f}",
            f"≥ {RELATIVE_GOAL}",
            ratio >= RELATIVE_GOAL,
        ),
    ]


def _rate(search: Search) -> str:
    steps = ", ".join(
        f"{w.rate:g}/s: {ms(w.p99)}, CPU {ms(w.cpu / len(w.deliveries))} an event"
        for w in search.tried
    )
    return f"{search.best:g} events/s (p99 by rate: {steps})"
