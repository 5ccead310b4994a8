"""What a channel's memory costs a new thread (issue 46): `python -m bench memory`.

A new thread of a channel that remembers 200 memories (its entry within the default
ASSISTANT_MEMORY_TOKENS, 2,000: the newest that fit, a note for the others) against one of a
channel that remembers none, on a SQLite store in a temporary directory: the person's message
recorded with its opening (entry 0, then the memory entry read and written in the same
transaction), the log read back, and the first prompt built (`context.budget.PromptBuilder`,
the default window). The figure is the median process CPU time per thread, each kind measured
in turns so that a machine's drift weighs on both alike; the goal: at most 1 ms more with 200
memories. A third kind, all 200 in the entry (room for 20,000 tokens), is shown without a goal.

It also checks the cacheable prefix: the memory entry's bytes are the same in every new thread
of the channel until a memory changes, and so is every prompt's start through it.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from bench.report import Figure
from context.budget import PromptBuilder
from context.entry import UserContent
from context.memory import is_memory_entry
from context.storage import EntryMeta, Opening, Store, ThreadKey, ThreadMessage, open_store
from context.storage.memory import NewMemory
from context.tokens import TokenCounter, counter_for

MEMORIES = 200
MEMORY_TOKENS = 2_000  # ASSISTANT_MEMORY_TOKENS' default: the newest that fit, a note for the rest
ALL_TOKENS = 20_000  # room for all 200: what carrying every one costs (no goal)
WINDOW = 128_000
GOAL_MS = 1.0
PERSONA = "You're Aya, the on-call helper of the Platform team. Keep replies short."
TEAM, REMEMBERS, FORGETS = "T0BENCH001", "C0MEMORY01", "C0NOMEMORY"


def _memories() -> list[NewMemory]:
    return [
        NewMemory(f"Fact {n}: deploys of service {n} freeze on Fridays after 15:00 UTC.", "U0ADA")
        for n in range(MEMORIES)
    ]


def run(smoke: bool = False) -> list[Figure]:
    threads = 5 if smoke else 300
    counter = counter_for("gpt-4o-mini")
    with TemporaryDirectory() as directory:
        store = open_store(f"sqlite:///{Path(directory) / 'bench.db'}")
        try:
            store.remember_all(TEAM, REMEMBERS, _memories(), "import")
            cpu: dict[str, list[float]] = {REMEMBERS: [], FORGETS: [], "all": []}
            prompts: list[str] = []
            for n in range(threads):
                for channel, tokens in (
                    (REMEMBERS, MEMORY_TOKENS),
                    (FORGETS, MEMORY_TOKENS),
                    (REMEMBERS, ALL_TOKENS),
                ):
                    ts = f"{1700000000 + (tokens == ALL_TOKENS)}.{n:06d}"
                    start = time.process_time()
                    text = _new_thread(store, ThreadKey(TEAM, channel, ts), counter, tokens)
                    cpu["all" if tokens == ALL_TOKENS else channel].append(
                        time.process_time() - start
                    )
                    if channel == REMEMBERS and tokens == MEMORY_TOKENS:
                        prompts.append(text)
            whole = store.entries(ThreadKey(TEAM, REMEMBERS, "1700000001.000000"))[1].content
            entry = store.entries(ThreadKey(TEAM, REMEMBERS, "1700000000.000000"))[1].content
        finally:
            store.close()
    with_ms = statistics.median(cpu[REMEMBERS]) * 1000
    without_ms = statistics.median(cpu[FORGETS]) * 1000
    more = with_ms - without_ms
    all_ms = statistics.median(cpu["all"]) * 1000
    marker = '"index":2'  # the person's entry: everything before it is the cacheable prefix
    prefixes = {p[: p.index(marker)] for p in prompts}
    return [
        Figure("threads of each kind", f"{threads:,}"),
        Figure("memory entry", f"{len(str(entry)):,} characters, {MEMORIES} memories"),
        Figure("CPU per new thread, no memory", f"{without_ms:.3f} ms"),
        Figure("CPU per new thread, 200 memories", f"{with_ms:.3f} ms"),
        Figure("more CPU with 200 memories", f"{more:.3f} ms", f"<= {GOAL_MS} ms", more <= GOAL_MS),
        Figure(
            f"CPU per new thread, all 200 in the entry ({ALL_TOKENS:,} tokens' room)",
            f"{all_ms:.3f} ms (entry {len(str(whole)):,} characters)",
        ),
        Figure(
            "prompts' start through the memory entry the same in every thread",
            "yes" if len(prefixes) == 1 and is_memory_entry(str(entry)) else "no",
            "yes",
            len(prefixes) == 1,
        ),
    ]


def _new_thread(store: Store, key: ThreadKey, counter: TokenCounter, tokens: int) -> str:
    """Record a person's first message in a new thread, read the log, build the prompt."""
    content = UserContent(userid="<@U0BOB>", text="Can I deploy the billing service today?")
    store.record_message(
        key,
        content,
        "2026-11-29T10:00:00Z",
        EntryMeta(slack_ts=key.thread_ts, wants_answer=True),
        Opening(lambda: PERSONA, "2026-11-29T10:00:00Z", tokens),
        ThreadMessage(key.thread_ts, "U0BOB", content.text),
    )
    entries = store.entries(key)
    return PromptBuilder(WINDOW, counter).build(entries).text
