"""How much of each prompt a provider's prompt cache can serve when the log outgrows the budget.

`python -m bench.prompt_prefix [--steps N] [--budget TOKENS] [--no-record]`, from the
repository root. It simulates a thread of N model steps (default 300) against a small budget
(default 4,000 tokens): people's messages, history reads and their results, replies, now and
then a long paste and a pinned instructions entry, built each step by
`context.budget.build_prompt` with one cache for the thread. For each step
after the first it measures the common prefix of the prompt and the previous prompt:

- prefix share: common prefix / length of the prompt (the issue's figure): goals >= 90%
  overall and >= 98% before any pruning. Before pruning the builder loses only the previous
  prompt's closing `]`, so there the figure is bounded by how much each step adds
  (1 - added / length), not by the builder: small early prompts pull the average down. The
  same bound holds on every step where the cut does not move (reported apart); each move
  loses everything after entry 0.
- byte-weighted: the sum of common prefixes over the sum of prompt lengths (the share of all
  the bytes sent that a cache could serve);
- reuse: common prefix / (length of the previous prompt - 1): 100% means nothing of the
  previous prompt but its `]` was lost;
- the same prefix share as the provider sees the call (tool schemas and the fixed system
  message before the log), when the assistant package is importable.

It prints the figures and appends a dated table to bench/RESULTS.md (unless --no-record).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

from context.budget import BuiltPrompt, PromptCache, build_prompt
from context.entry import Content, Entry, UserContent
from context.log import ContextLog
from context.tokens import counter_for
from context.toolcalls import FinishRequest, GetThreadHistory, PostMessage

RESULTS = Path(__file__).with_name("RESULTS.md")
MODEL = "gpt-4o-mini"
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


def pinned(entry: Entry) -> bool:
    return entry.role == "system" and str(entry.content).startswith("Instructions:")


@dataclass
class Thread:
    """The simulated thread: its log, clock and cache, and each step's prompt."""

    budget: int
    chunk_tokens: int | None = None
    rng: random.Random = field(default_factory=lambda: random.Random(4))
    log: ContextLog = field(default_factory=ContextLog)
    cache: PromptCache = field(default_factory=PromptCache)
    clock: datetime = datetime(2025, 6, 2, 9, 0, tzinfo=UTC)
    prompts: list[BuiltPrompt] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.counter = counter_for(MODEL)
        self.record(PERSONA)

    def record(self, content: Content) -> None:
        self.clock += timedelta(seconds=self.rng.randint(2, 600))
        self.log.append(content, self.clock.strftime("%Y-%m-%dT%H:%M:%SZ"))

    def step(self) -> None:
        """One model call: build its prompt from the log as it is now."""
        started = time.perf_counter()
        built = build_prompt(
            self.log.entries,
            self.budget,
            self.counter,
            pinned=pinned,
            chunk_tokens=self.chunk_tokens,
            cache=self.cache,
        )
        self.seconds.append(time.perf_counter() - started)
        self.prompts.append(built)

    def run(self, steps: int) -> None:
        rng, run = self.rng, 0
        while len(self.prompts) < steps:
            run += 1
            for _ in range(rng.choice((0, 0, 1, 2))):  # people talking between runs
                self.record(UserContent(userid=rng.choice(USERS), text=paragraph(rng, 1, 3)))
            if run % 40 == 15:
                self.record("Instructions: from now on, answer in Portuguese and cite runbooks.")
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


def common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, by halving (slice comparisons run in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def provider_prefix() -> str | None:
    """What a provider sees before the log: the tool schemas and the fixed system message."""
    try:
        from assistant.instructions import SYSTEM_MESSAGE
        from assistant.tools import TOOL_SCHEMAS
    except Exception:
        return None
    return json.dumps(TOOL_SCHEMAS) + SYSTEM_MESSAGE


Row = tuple[str, str, str, bool | None]  # figure, value, goal, met (None: no goal)


def _mean(values: Sequence[float]) -> str:
    return f"{100 * statistics.fmean(values):.1f}%" if values else "n/a"


def _goal(values: Sequence[float], goal: float) -> bool:
    return bool(values) and statistics.fmean(values) >= goal


def measure(thread: Thread) -> list[Row]:
    prompts = thread.prompts
    first = next((n for n, p in enumerate(prompts) if p.omitted or p.shortened), len(prompts))
    fixed = provider_prefix()
    shares, sent, reuse, common_total, moved = [], [], [], 0, []
    for previous, current in pairwise(prompts):
        common = common_prefix(previous.text, current.text)
        common_total += common
        shares.append(common / len(current.text))
        reuse.append(common / (len(previous.text) - 1))
        if fixed is not None:
            sent.append((len(fixed) + common) / (len(fixed) + len(current.text)))
        moved.append(previous.omitted != current.omitted)
    split = max(0, first - 1)  # shares[k] compares prompts k and k + 1
    steady = [s for s, m in zip(shares, moved, strict=True) if not m]
    moves, tokens = sum(moved), [p.tokens for p in prompts]
    sent_bytes = sum(len(p.text) for p in prompts[1:])
    rows: list[Row] = [
        ("steps (model calls)", f"{len(prompts)}, budget {thread.budget} tokens", "", None),
        ("token counter", getattr(thread.counter, "name", "?"), "", None),
        ("steps before the first pruning", str(first), "", None),
        ("prefix share, overall", _mean(shares), f">= {GOAL_OVERALL:.0%}",
         _goal(shares, GOAL_OVERALL)),
        ("prefix share, before any pruning", _mean(shares[:split]), f">= {GOAL_BEFORE:.0%}",
         _goal(shares[:split], GOAL_BEFORE)),
        ("prefix share, after the first pruning", _mean(shares[split:]), "", None),
        ("prefix share, steps where the cut did not move", _mean(steady), "", None),
        ("prefix share, byte-weighted", f"{100 * common_total / sent_bytes:.1f}%", "", None),
        ("reuse of the previous prompt, overall", _mean(reuse), "", None),
        ("reuse of the previous prompt, before pruning", _mean(reuse[:split]), "", None),
        ("cut moves", f"{moves} (one per {len(moved) / max(1, moves):.0f} steps)", "", None),
        ("prompt tokens: mean / min / max",
         f"{statistics.fmean(tokens):.0f} / {min(tokens)} / {max(tokens)}", "", None),
        ("build_prompt time: mean / max", f"{1000 * statistics.fmean(thread.seconds):.2f} ms / "
         f"{1000 * max(thread.seconds):.2f} ms", "", None),
    ]  # fmt: skip
    if sent:
        rows[8:8] = [
            ("prefix share as sent (tools, system message, log)", _mean(sent), "", None),
            ("prefix share as sent, before any pruning", _mean(sent[:split]), "", None),
        ]
    return rows


def append_results(rows: list[Row], command: str) -> None:
    """One dated table (the layout of bench/report.py), written in one call."""
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    columns = ("date", "benchmark", "figure", "value", "goal", "verdict", "cores", "command")
    lines = ["", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for name, value, goal, met in rows:
        verdict = "" if met is None else ("met" if met else "MISSED")
        cells = (date, "prompt_prefix", name, value, goal, verdict, str(os.cpu_count()), command)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    with RESULTS.open("a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.prompt_prefix", description=__doc__)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--budget", type=int, default=4000)
    parser.add_argument("--chunk", type=int, default=None, help="chunk_tokens (default: auto)")
    parser.add_argument("--no-record", action="store_true", help="print only")
    args = parser.parse_args(argv)
    thread = Thread(args.budget, args.chunk)
    thread.run(args.steps)
    rows = measure(thread)
    command = " ".join(["python -m bench.prompt_prefix", *(argv or sys.argv[1:])])
    print(f"{command}  (cores: {os.cpu_count()})")
    width = max(len(r[0]) for r in rows)
    for name, value, goal, met in rows:
        verdict = "" if met is None else ("met" if met else "MISSED")
        print(f"  {name.ljust(width)}  {value}  {goal}  {verdict}".rstrip())
    if not args.no_record:
        append_results(rows, f"`{command}`")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
