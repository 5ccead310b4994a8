"""Genuine Slack events beside an attack on the HTTP port.

Strangers who do not know the signing secret send, all at once and over and over: bodies of
tens of megabytes (declared, or chunked with made-up signing headers so that the app has to
read them), requests that stop halfway (half a request line, half the headers, a body that
never ends, nothing at all), and malformed or unsigned bodies. Meanwhile signed mentions
arrive at a steady pace. Slack retries an event it has not seen acknowledged within 3 s, so
each mention's time to its HTTP response is the figure; the app's memory (sampled, and its
peak) says what the attack cost it.
"""

from __future__ import annotations

import itertools
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.fakes import FakeOpenAI, FakeSlack
from assistant.fakes.events import attacks
from bench import conversation
from bench.load import Delivery, send_events
from bench.model import AnsweringModel
from bench.report import Figure, median, ms, percentile
from bench.server import AppServer

FULL = {"mentions": 200, "pace": 0.05, "big": 4, "big_bytes": 50_000_000, "slow": 20, "bad": 4}
SMOKE = {"mentions": 3, "pace": 0.0, "big": 1, "big_bytes": 2_000_000, "slow": 2, "bad": 1}
ACK_GOAL_S = 3.0  # Slack's: later, it delivers the event again
MEMORY_GOAL = 100 * 1024 * 1024  # growth while the attack lasts: the bodies are not kept
ATTACK_TIMEOUT = 30.0  # a sender that hears nothing back for this long counts it "left open"


@dataclass
class Attack:
    """What the strangers did and got: outcomes by kind of attack, and bytes."""

    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    offered: int = 0  # body bytes the big senders meant to send
    sent: int = 0  # bytes the senders got out (the kernel's buffers take MBs) before the cut
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, outcome: attacks.Outcome, offered: int = 0) -> None:
        status = str(outcome.status) if outcome.status else "no answer"
        what = f"{status}, closed" if outcome.closed else f"{status}, LEFT OPEN"
        with self._lock:
            self.outcomes[(kind, what)] += 1
            self.offered += offered
            self.sent += outcome.sent

    def left_open(self) -> int:
        return sum(n for (_, what), n in self.outcomes.items() if "LEFT OPEN" in what)


@dataclass
class Flood:
    acks: list[Delivery]
    attack: Attack
    rss_before: int
    rss_peak: int  # the app's high-water mark (VmHWM) from the attack's start to its end
    answered: int
    mentions: int


def flood(app: AppServer, slack: FakeSlack, model: AnsweringModel, size: dict[str, Any]) -> Flood:
    """Runs the attack while `size["mentions"]` signed mentions are sent one by one."""
    made = conversation.mentions(slack, int(size["mentions"]), 1, first_thread=1000)
    warm = conversation.mentions(slack, 2, 1)  # first requests load code: not the attack's
    send_events(app.url, [m.event for m in warm], 1)
    conversation.wait_answered(slack, model, warm, timeout=60)
    rss_before = app.rss_bytes()
    _reset_peak_rss(app)  # so that the peak read at the end is the attack's, not the start's

    attack = Attack()
    stop = threading.Event()
    senders = _senders(app.port, size, attack)
    threads = [threading.Thread(target=_repeat, args=(send, stop), daemon=True) for send in senders]
    for thread in threads:
        thread.start()
    acks: list[Delivery] = []
    for mention in made:
        acks += send_events(app.url, [mention.event], 1)
        time.sleep(size["pace"])  # a steady trickle, as Slack delivers a busy workspace's events
    stop.set()
    for thread in threads:
        thread.join(ATTACK_TIMEOUT + 10)
    conversation.wait_answered(slack, model, made, timeout=60)
    return Flood(
        acks,
        attack,
        rss_before,
        _peak_rss(app),
        conversation.answered_once(slack, made),
        len(made),
    )


def _repeat(send: Callable[[], None], stop: threading.Event) -> None:
    send()  # every kind runs at least once, however short the run
    while not stop.is_set():
        send()


def _senders(port: int, size: dict[str, Any], attack: Attack) -> list[Callable[[], None]]:
    big = int(size["big_bytes"])
    t = ATTACK_TIMEOUT
    big_kinds = ["declared length", "chunked, unsigned", "chunked, forged signature"]

    def big_sender(number: int) -> Callable[[], None]:
        # Each sender keeps to one kind; a lone sender takes turns with all of them.
        kinds = itertools.cycle(big_kinds if size["big"] == 1 else [big_kinds[number % 3]])

        def send() -> None:
            kind = next(kinds)
            chunked, forged = kind.startswith("chunked"), kind.endswith("forged signature")
            outcome = attacks.oversized(port, big, chunked=chunked, forged=forged, timeout=t)
            attack.record(f"{big / 1e6:g} MB body, {kind}", outcome, big)

        return send

    slow_kinds: list[tuple[str, Callable[[], attacks.Outcome]]] = [
        ("half a request line", lambda: attacks.half_request_line(port, t)),
        ("half the headers", lambda: attacks.half_headers(port, t)),
        ("a body that stops", lambda: attacks.slow_body(port, t)),
        ("nothing sent", lambda: attacks.silent(port, t)),
    ]

    def slow_sender(number: int) -> Callable[[], None]:
        kind, run = slow_kinds[number % len(slow_kinds)]
        return lambda: attack.record(kind, run())

    bad_kinds = itertools.cycle(attacks.MALFORMED)

    def bad_sender() -> Callable[[], None]:
        def send() -> None:
            kind = next(bad_kinds)
            attack.record(kind, attacks.malformed(port, kind, t))

        return send

    return [
        *(big_sender(n) for n in range(int(size["big"]))),
        *(slow_sender(n) for n in range(max(int(size["slow"]), len(slow_kinds)))),
        *(bad_sender() for _ in range(int(size["bad"]))),
    ]


def _reset_peak_rss(app: AppServer) -> None:
    Path(f"/proc/{app.pid}/clear_refs").write_text("5")  # Linux: VmHWM := VmRSS


def _peak_rss(app: AppServer) -> int:
    for line in Path(f"/proc/{app.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc status")


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    model = AnsweringModel()
    with (
        FakeSlack() as slack,
        FakeOpenAI(default=model) as fake,
        tempfile.TemporaryDirectory() as workdir,
        AppServer(slack, fake, Path(workdir)) as app,
    ):
        result = flood(app, slack, model, size)
    seconds = [d.seconds for d in result.acks]
    ok = sum(d.status == 200 for d in result.acks)
    worst, growth = max(seconds), result.rss_peak - result.rss_before
    attack = result.attack
    return [
        Figure(
            "load",
            f"{result.mentions} signed mentions, one every {size['pace']:g} s, beside "
            f"{size['big']} senders of {size['big_bytes'] / 1e6:g} MB bodies, "
            f"{max(size['slow'], 4)} slow senders, {size['bad']} senders of malformed bodies",
        ),
        Figure("ack p50", ms(median(seconds))),
        Figure("ack p99", ms(percentile(seconds, 0.99))),
        Figure("ack max", ms(worst), f"< {ms(ACK_GOAL_S)}", worst < ACK_GOAL_S),
        Figure("HTTP 200", f"{ok}/{result.mentions}", "all", ok == result.mentions),
        Figure(
            "answered exactly once",
            f"{result.answered}/{result.mentions}",
            "all",
            result.answered == result.mentions,
        ),
        Figure(
            "app memory: before / peak (growth)",
            f"{result.rss_before / 2**20:.0f} / {result.rss_peak / 2**20:.0f} MiB "
            f"(+{growth / 2**20:.0f} MiB)",
            f"growth < {MEMORY_GOAL / 2**20:.0f} MiB",
            growth < MEMORY_GOAL,
        ),
        Figure(
            "attack: body bytes offered / sent before the cut (into socket buffers, mostly)",
            f"{attack.offered / 1e9:.2f} GB / {attack.sent / 1e6:.1f} MB",
        ),
        Figure(
            "attack: connections left open",
            str(attack.left_open()),
            "0",
            attack.left_open() == 0,
        ),
        *(
            Figure(f"attack: {kind}", f"{n} x {what}")
            for (kind, what), n in sorted(attack.outcomes.items())
        ),
    ]
