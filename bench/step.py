"""Step overhead vs log length: what one agent step costs outside the model and Slack.

The real agent loop (`StepLoop.steps`) runs on a real SqlStore (SQLite in a temporary
directory), Recorder and TraceWriter (into memory), with an instant stub model and no-op
Slack tools, on a thread grown to each size. The time between one model call's return and
the next call is the step's own cost; its pieces are timed where they happen, through
subclasses of the real classes: load (Recorder.entries: the entries recorded since the last
step, from the store), build (ContextLog.add and the run's prompt builder, within the default
context budget: 128,000 tokens less the answer's reserve, so from some thousands of entries on
the prompt is the pruned log), record (Recorder.record: the store append, then the trace
block). Medians over many steps. The loop and its timers are in bench/timed_agent.py.

The naive baseline is the same loop with the prompt built the obvious way: a list of dicts
of every entry, then json.dumps, on every step.
"""

from __future__ import annotations

import itertools
import random
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from bench import texts
from bench.report import Figure, ms
from bench.timed_agent import KEY, Loop, time_loop
from context.entry import Content, UserContent, format_timestamp
from context.storage.store import SqlStore
from context.toolcalls import FinishRequest, GetThreadHistory, PostMessage

# Size -> steps timed there; each step adds an entry, so steps stay below the next size.
FULL_STEPS = {10: 40, 100: 100, 1_000: 100, 10_000: 60}
SMOKE_STEPS = {10: 5, 30: 5}
GOAL_S = 0.002  # per step, at the largest size


def conversation(seed: int = 2) -> Iterator[Content]:
    """A thread's entries after entry 0: question, reply, finish; every 7th run first reads
    the thread history."""
    rng = random.Random(seed)
    for run in range(1, 10**9):
        label = texts.tag(0, run % 1000)
        yield UserContent(userid="<@U0FAKEUSR1>", text=texts.user_text(rng, label))
        if run % 7 == 0:
            yield GetThreadHistory(ascending=False, reasoning=texts.reasoning(rng))
            lines = [
                f"[2025-04-04T12:{m:02d}:00Z] <@U0FAKEUSR1>: {rng.choice(texts.QUESTIONS)}"
                for m in range(5)
            ]
            yield "Thread history (5 messages, newest first):\n" + "\n".join(lines)
        yield PostMessage(text=texts.answer_text(rng, [label]), reasoning=texts.reasoning(rng))
        yield FinishRequest(reasoning=texts.reasoning(rng))


def stamp(seconds: int) -> str:
    return format_timestamp(datetime.fromtimestamp(1_743_770_000 + seconds, UTC))


def grow(store: SqlStore, contents: Iterator[Content], size: int) -> None:
    for n in range(len(store.entries(KEY)), size):
        store.append(KEY, next(contents), stamp(n))


def run(smoke: bool = False) -> list[Figure]:
    plan = SMOKE_STEPS if smoke else FULL_STEPS
    pairs: list[tuple[Loop, Loop]] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = SqlStore(f"sqlite:///{Path(tmp) / 'step.db'}")
        try:
            contents = conversation()
            store.append(KEY, "You're a helpful AI assistant named Aya.", stamp(0))
            for size, steps in plan.items():
                grow(store, contents, size)
                incremental = time_loop(store, size, steps, naive=False)
                pairs.append((incremental, time_loop(store, size, steps, naive=True)))
        finally:
            store.close()
    return figures(pairs)


def figures(pairs: list[tuple[Loop, Loop]]) -> list[Figure]:
    out = []
    for ours, naive in pairs:
        p, n = ours.pieces, naive.pieces
        other = p["step"] - p["load"] - p["build"] - p["record"]
        out.append(
            Figure(
                f"step at {ours.size:,} entries ({ours.prompt_bytes / 1024:,.0f} KiB prompt)",
                f"{ms(p['step'])} = load {ms(p['load'])} + build {ms(p['build'])} "
                f"({p['faults']:.0f} page faults) + record {ms(p['record'])} (append "
                f"{ms(p['append'])}, render {ms(p['render'])}) + other {ms(max(other, 0))}",
            )
        )
        out.append(
            Figure(
                f"naive step at {ours.size:,} entries",
                f"{ms(n['step'])} (build {ms(n['build'])}); naive ÷ incremental: step "
                f"{n['step'] / p['step']:.1f}x, build {n['build'] / p['build']:.0f}x",
            )
        )
        out.append(
            Figure(
                f"client request encoding at {ours.size:,} (in the model call, not the step)",
                ms(ours.encode),
            )
        )
    last = pairs[-1][0]
    out.append(
        Figure(
            f"step at {last.size:,} entries",
            ms(last.pieces["step"]),
            f"< {ms(GOAL_S)}",
            last.pieces["step"] < GOAL_S,
        )
    )
    loops = [ours for ours, _ in pairs]
    for small, big in itertools.pairwise(loops):
        grew = big.pieces["step"] / small.pieces["step"]
        bytes_grew = big.prompt_bytes / small.prompt_bytes
        out.append(
            Figure(
                f"growth {small.size:,} → {big.size:,} entries: step vs prompt bytes",
                f"x{grew:.2f} vs x{bytes_grew:.1f}",
                "step ≤ bytes",
                grew <= bytes_grew,
            )
        )
    return out
