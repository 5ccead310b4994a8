"""How much of each prompt a provider's prompt cache can serve when the log outgrows the budget.

`python -m bench prompt_prefix` (or `python -m bench.prompt_prefix [--steps N] [--budget
TOKENS] [--no-record]`), from the repository root. It simulates a thread of N model steps
(default 300): people's messages, history reads and their results, replies, now and then a
long paste and a pinned instructions entry, each step's prompt built by the app's
`context.budget.PromptBuilder`. The same thread (its text comes from a fixed seed) is built
twice: within a small budget (default 8,000 tokens, a sixteenth of the default window), and
with a budget it never reaches, so that nothing is pruned. For each step after the first it
compares the prompt with the previous one:

- prefix share: common prefix / length of the new prompt, averaged over the steps. Goals:
  >= 90% with pruning, >= 98% for the same thread while no pruning happens (unpruned). Without
  pruning the builder loses only the previous prompt's closing `]`, so there the figure is
  1 - (bytes the step added) / (prompt length): a property of the thread, which the unpruned
  build measures over the whole thread. The first steps of the pruned build, before its first
  pruning, are reported too, but their prompts are short (an added reply is a large share of
  them), so they are no measure of the builder.
- reuse: common prefix / (length of the previous prompt - 1): how much of what the cache holds
  from the last call the builder keeps; 100% means nothing of the previous prompt but its `]`
  was lost.
- byte-weighted: the sum of common prefixes over the sum of prompt lengths (the share of all
  the bytes sent that a cache could serve);
- the prefix share as the provider sees the call (tool schemas and the fixed system message
  before the log).

`python -m bench prompt_prefix` appends the figures to bench/RESULTS.md like every benchmark.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import pairwise

from bench.billing import common_prefix
from bench.report import Figure, append_results, machine, ms, print_figures
from context.budget import INSTRUCTIONS_PREFIX, BuiltPrompt, PromptBuilder, carries_instructions
from context.entry import Content, UserContent
from context.log import ContextLog
from context.tokens import counter_for
from context.toolcalls import FinishRequest, GetThreadHistory, PostMessage

MODEL = "gpt-4o-mini"
BUDGET, STEPS = 8_000, 300
UNPRUNED = 10**9  # a budget no simulated thread reaches
GOAL_OVERALL, GOAL_BEFORE = 0.90, 0.98
PERSONA = (
    "You're Aya, the on-call helper of the Platform team. Answer in the language you are asked "
    "in, keep replies short, link runbooks when they exist, and never promise dates for fixes. "
    "When someone reports an incident, ask for the service, the environment and the first "
    "error line before suggesting anything. Escalate to <@U01LEAD> for anything that touches "
    "customer data."
)
_VOCABULARY = (
    "deploy billing api failed twice this morning migration already exists retry rollback "
    "database schema owner please check logs before lunch meeting tomorrow release notes "
    "customer reported latency spike dashboard alert on-call runbook incident postmortem "
    "cluster node memory pressure restarted pods yesterday upgrade staging production canary "
    "traffic users affected minutes estimate thanks the a to of and we it is on for with that"
)
WORDS = tuple(_VOCABULARY.split())
USERS = ("<@U04MARTA>", "<@U02JONAS>", "<@U07PRIYA>", "<@U03LENA>")


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(6, 18))).capitalize() + rng.choice(".?!")


def paragraph(rng: random.Random, low: int, high: int) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(low, high)))


def history(rng: random.Random, clock: datetime) -> str:
    lines = [
        f"[{(clock - timedelta(minutes=n * 7)).strftime('%Y-%m-%dT%H:%M:%SZ')}] "
        f"{rng.choice(USERS)}: {paragraph(rng, 1, 2)}"
        for n in range(rng.randint(5, 20))
    ]
    return f"Thread history ({len(lines)} messages, newest first):\n" + "\n".join(lines)


def paste(rng: random.Random) -> str:
    line = "2025-06-02T08:51:12Z ERROR billing-api migrate: relation invoices_2025 exists\n"
    return "here is the whole log:\n" + line * rng.randint(50, 200)


@dataclass
class Thread:
    """The simulated thread: its log, clock and cache, and each step's prompt."""

    budget: int
    rng: random.Random = field(default_factory=lambda: random.Random(4))
    log: ContextLog = field(default_factory=ContextLog)
    clock: datetime = datetime(2025, 6, 2, 9, 0, tzinfo=UTC)
    prompts: list[BuiltPrompt] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.counter = counter_for(MODEL)
        # One builder for the whole thread, as the app keeps one per run (and every run of
        # a long thread starts the same way: the cut is a function of the old entries).
        self.builder = PromptBuilder(self.budget, self.counter, pinned=carries_instructions)
        self.record(PERSONA)

    def record(self, content: Content) -> None:
        self.clock += timedelta(seconds=self.rng.randint(2, 600))
        self.log.append(content, self.clock.strftime("%Y-%m-%dT%H:%M:%SZ"))

    def step(self) -> None:
        """One model call: build its prompt from the log as it is now."""
        started = time.perf_counter()
        built = self.builder.build(self.log.entries)
        self.seconds.append(time.perf_counter() - started)
        self.prompts.append(built)

    def run(self, steps: int) -> None:
        rng, run = self.rng, 0
        while len(self.prompts) < steps:
            run += 1
            for _ in range(rng.choice((0, 0, 1, 2))):  # people talking between runs
                self.record(UserContent(userid=rng.choice(USERS), text=paragraph(rng, 1, 3)))
            if run % 40 == 15:
                self.record(
                    f"{INSTRUCTIONS_PREFIX} from now on, answer in Portuguese and cite runbooks."
                )
            text = paste(rng) if rng.random() < 0.03 else paragraph(rng, 1, 3)
            self.record(UserContent(userid=rng.choice(USERS), text=text))
            if rng.random() < 0.25:
                self.step()
                self.record(GetThreadHistory(limit=20, reasoning="Earlier messages matter."))
                self.record(history(rng, self.clock))
            self.step()
            self.record(PostMessage(text=paragraph(rng, 2, 6), reasoning=sentence(rng)))
            self.step()
            self.record(FinishRequest(reasoning="Answered."))
        del self.prompts[steps:], self.seconds[steps:]


def provider_prefix() -> str | None:
    """What a provider sees before the log: the tool schemas and the fixed system message."""
    try:
        from assistant.model.instructions import SYSTEM_MESSAGE
        from assistant.model.tool_calls import TOOL_SCHEMAS
    except Exception:
        return None
    return json.dumps(TOOL_SCHEMAS) + SYSTEM_MESSAGE


def _mean(values: Sequence[float]) -> str:
    return f"{100 * statistics.fmean(values):.1f}%" if values else "n/a"


def _goal(values: Sequence[float], goal: float) -> bool:
    return bool(values) and statistics.fmean(values) >= goal


@dataclass
class Shares:
    """Each prompt against the one before it (the first prompt has none)."""

    prefix: list[float] = field(default_factory=list)  # common prefix / this prompt
    reuse: list[float] = field(default_factory=list)  # common prefix / the previous one - "]"
    sent: list[float] = field(default_factory=list)  # prefix share with what precedes the log
    moved: list[bool] = field(default_factory=list)  # the omitted ranges changed
    common: int = 0
    total: int = 0

    @classmethod
    def of(cls, prompts: Sequence[BuiltPrompt]) -> Shares:
        fixed = provider_prefix()
        shares = cls()
        for previous, current in pairwise(prompts):
            common = common_prefix(previous.text, current.text)
            shares.common, shares.total = shares.common + common, shares.total + len(current.text)
            shares.prefix.append(common / len(current.text))
            shares.reuse.append(common / (len(previous.text) - 1))
            if fixed is not None:
                shares.sent.append((len(fixed) + common) / (len(fixed) + len(current.text)))
            shares.moved.append(previous.omitted != current.omitted)
        return shares


def measure(thread: Thread, unpruned: Thread) -> list[Figure]:
    prompts = thread.prompts
    first = next((n for n, p in enumerate(prompts) if p.omitted or p.shortened), len(prompts))
    pruned, whole = Shares.of(prompts), Shares.of(unpruned.prompts)
    split = max(0, first - 1)  # prefix[k] compares prompts k and k + 1
    steady = [s for s, m in zip(pruned.prefix, pruned.moved, strict=True) if not m]
    moves, tokens = sum(pruned.moved), [p.tokens for p in prompts]
    overall, unlimited = f">= {GOAL_OVERALL:.0%}", f">= {GOAL_BEFORE:.0%}"
    figures = [
        Figure("steps (model calls)", f"{len(prompts)}, budget {thread.budget} tokens"),
        Figure("token counter", getattr(thread.counter, "name", "?")),
        Figure("steps before the first pruning", str(first)),
        Figure(
            "prefix share of each prompt, with pruning",
            _mean(pruned.prefix),
            overall,
            _goal(pruned.prefix, GOAL_OVERALL),
        ),
        Figure(
            "prefix share of each prompt, the same thread unpruned",
            _mean(whole.prefix),
            unlimited,
            _goal(whole.prefix, GOAL_BEFORE),
        ),
        Figure("reuse of the previous prompt, with pruning", _mean(pruned.reuse)),
        Figure("reuse of the previous prompt, unpruned", _mean(whole.reuse)),
        Figure(
            "prefix share, with pruning, before the first pruning (short prompts)",
            _mean(pruned.prefix[:split]),
        ),
        Figure("prefix share, with pruning, steps where the cut did not move", _mean(steady)),
        Figure(
            "prefix share as sent (tools, system message, log): with pruning / unpruned",
            f"{_mean(pruned.sent)} / {_mean(whole.sent)}",
        ),
        Figure(
            "prefix share, byte-weighted: with pruning / unpruned",
            f"{100 * pruned.common / pruned.total:.1f}% / {100 * whole.common / whole.total:.1f}%",
        ),
        Figure("cut moves", f"{moves} (one per {len(pruned.moved) / max(1, moves):.0f} steps)"),
        Figure(
            "prompt tokens with pruning: mean / min / max",
            f"{statistics.fmean(tokens):.0f} / {min(tokens)} / {max(tokens)}",
        ),
        Figure(
            "build time per step: mean / max",
            f"{ms(statistics.fmean(thread.seconds))} / {ms(max(thread.seconds))}",
        ),
    ]
    return figures


def run(smoke: bool = False, budget: int = BUDGET, steps: int = STEPS) -> list[Figure]:
    steps = 20 if smoke else steps
    threads = Thread(budget), Thread(UNPRUNED)  # the same thread: its seed makes its text
    for thread in threads:
        thread.run(steps)
    return measure(*threads)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.prompt_prefix", description=__doc__)
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--budget", type=int, default=BUDGET)
    parser.add_argument("--no-record", action="store_true", help="print only")
    args = parser.parse_args(argv)
    figures = run(budget=args.budget, steps=args.steps)
    command = " ".join(["python -m bench.prompt_prefix", *(argv or sys.argv[1:])])
    print(f"{command}  (cores: {machine()})")
    print_figures("prompt_prefix", figures)
    if not args.no_record:
        append_results("prompt_prefix", figures, command)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
