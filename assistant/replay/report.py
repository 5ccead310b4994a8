"""The report of `assistant replay … --report FILE`: per input, where the log was cut, what the
recorded log did next and what the replay did (with the thinking steps each showed, or would
show), the stops the log records; then a summary. Markdown for people
(assistant/replay/markdown.py), or JSON Lines (a `.jsonl` file) for scripts: one object per
input, then `{"summary": …}`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from assistant.replay.shown import Stop
from assistant.run.progress.steps import Step
from context.entry import FAILURE_PREFIX, RUN_ENDS, AssistantEntry, Entry, SystemEntry, UserEntry
from context.storage import EntryMeta
from context.toolcalls import FinishRequest, PostMessage

Status = Literal["ran", "failed", "not run"]
TOKENS = ("prompt_tokens", "cached_tokens", "completion_tokens")


@dataclass(frozen=True)
class Side:
    """What one side did after the cut: its entries and, when known, their side metadata."""

    entries: Sequence[Entry] = ()
    metadata: Sequence[EntryMeta] | None = None  # None: not known (a log file has none)
    cards: Sequence[Step] = ()  # the thinking steps shown (assistant/replay/shown.py)

    @property
    def calls(self) -> list[str]:
        return [e.content.toolCall for e in self.entries if isinstance(e, AssistantEntry)]

    @property
    def texts(self) -> list[str]:
        return [
            e.content.text
            for e in self.entries
            if isinstance(e, AssistantEntry) and isinstance(e.content, PostMessage)
        ]

    @property
    def errors(self) -> list[str]:
        return [
            e.content
            for e in self.entries
            if isinstance(e, SystemEntry) and e.content.startswith(FAILURE_PREFIX)
        ]

    @property
    def steps(self) -> int | None:
        """Model calls answered: each reply's usage is kept with the first entry it made."""
        if self.metadata is None:
            return None
        return sum(1 for meta in self.metadata if meta.model is not None)

    @property
    def tokens(self) -> dict[str, int] | None:
        if self.metadata is None:
            return None
        return {name: sum(getattr(m, name) or 0 for m in self.metadata) for name in TOKENS}

    @property
    def ended(self) -> str:
        last = self.entries[-1] if self.entries else None
        if last is None:
            return "nothing (the log ends there)"
        if isinstance(last, SystemEntry) and ends_run(last):
            return last.content.split(". ")[0]  # the reason, without who was told
        return "finishRequest" if ends_run(last) else "the log ends"

    def as_json(self) -> dict[str, Any]:
        return {
            "entries": [e.as_dict() for e in self.entries],
            "calls": self.calls,
            "texts": self.texts,
            "steps": self.steps,
            "tokens": self.tokens,
            "errors": self.errors,
            "ended": self.ended,
            "thinking_steps": [card.chunk() for card in self.cards],
        }


@dataclass(frozen=True)
class Outcome:
    """One input of the report."""

    source: str  # the input as given: a file, `-`, or a thread id
    at: int | None  # the cut: the entries before it were sent; None: the whole log
    log_entries: int = 0  # entries in the input's log
    asked: Entry | None = None  # the last person's message before the cut
    recorded: Side = field(default_factory=Side)
    replay: Side | None = None  # None: the replay did not run
    status: Status = "not run"
    problem: str | None = None  # why it failed or did not run
    stops: Sequence[Stop] = ()  # the stop button's presses the input's log records

    def as_json(self) -> dict[str, Any]:
        return {
            "input": self.source,
            "at": self.at,
            "log_entries": self.log_entries,
            "asked": self.asked.as_dict() if self.asked else None,
            "status": self.status,
            "problem": self.problem,
            "stops": [stop.as_json() for stop in self.stops],
            "recorded": self.recorded.as_json(),
            "replay": self.replay.as_json() if self.replay else None,
        }


def recorded_next(entries: Sequence[Entry], at: int) -> list[Entry]:
    """What the recorded log did after the cut: the entries from `at` through the first one
    that ends a run (finishRequest, `Stopped after …`, `Error: …`, the stop button's
    `Stopped: …`), or to the log's end."""
    taken = []
    for entry in entries[at:]:
        taken.append(entry)
        if ends_run(entry):
            break
    return taken


def ends_run(entry: Entry) -> bool:
    if isinstance(entry, AssistantEntry):
        return isinstance(entry.content, FinishRequest)
    return isinstance(entry, SystemEntry) and entry.content.startswith(RUN_ENDS)


def last_asked(entries: Sequence[Entry]) -> Entry | None:
    return next((e for e in reversed(entries) if isinstance(e, UserEntry)), None)


@dataclass(frozen=True)
class Summary:
    outcomes: Sequence[Outcome]

    def counts(self) -> dict[Status, int]:
        return {
            status: sum(o.status == status for o in self.outcomes)
            for status in ("ran", "failed", "not run")
        }

    def same_calls(self) -> tuple[int, int]:
        """Of the replays beside a recorded continuation, how many made the same tool calls."""
        compared = [o for o in self.outcomes if o.replay is not None and o.recorded.entries]
        return sum(o.replay.calls == o.recorded.calls for o in compared if o.replay), len(compared)

    def tokens(self, side: Literal["recorded", "replay"]) -> dict[str, int] | None:
        sides = [o.recorded if side == "recorded" else o.replay for o in self.outcomes]
        known = [s.tokens for s in sides if s is not None and s.tokens is not None]
        if not known:
            return None
        return {name: sum(t[name] for t in known) for name in TOKENS}

    def line(self) -> str:
        counts = self.counts()
        same, compared = self.same_calls()
        text = (
            f"{len(self.outcomes)} input(s): {counts['ran']} replayed, {counts['failed']} "
            f"failed, {counts['not run']} not run"
        )
        if compared:
            text += f"; same tool calls as recorded in {same} of {compared}"
        replay = self.tokens("replay")
        if replay is not None:
            text += f"; replay tokens {tokens_text(replay)}"
        recorded = self.tokens("recorded")
        if recorded is not None:
            text += f"; recorded tokens {tokens_text(recorded)}"
        return text + "."

    def as_json(self) -> dict[str, Any]:
        same, compared = self.same_calls()
        return {
            "summary": {
                "inputs": len(self.outcomes),
                **{key.replace(" ", "_"): value for key, value in self.counts().items()},
                "same_calls": same,
                "compared": compared,
                "replay_tokens": self.tokens("replay"),
                "recorded_tokens": self.tokens("recorded"),
                "line": self.line(),
            }
        }


def jsonl_report(outcomes: Sequence[Outcome]) -> str:
    lines = [o.as_json() for o in outcomes] + [Summary(outcomes).as_json()]
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def tokens_text(tokens: dict[str, int] | None) -> str:
    if tokens is None:
        return "—"
    return " / ".join(f"{tokens[name]:,}" for name in TOKENS)
