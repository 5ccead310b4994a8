"""What Slack showed of a run, for a replay and its report, derived from the log's entries
alone: the thinking steps (`assistant.run.progress.steps`, the very function the live task cards
come from) and the stop button's stops (their `Stopped: …` entries: who pressed it, and when)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assistant.run.progress.steps import Step, steps
from context.entry import STOP_PREFIX, Entry, SystemEntry

# The head of assistant.run.stopping.stop.stop_entry's text.
_STOP = re.compile(
    re.escape(STOP_PREFIX) + r"(<@[A-Z0-9]+>) pressed stop at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC)"
)
_MARKS = {"in_progress": "…", "complete": "✓", "error": "✗", "pending": "·"}


@dataclass(frozen=True)
class Stop:
    """A press of the stop button, as the log recorded it."""

    index: int
    by: str  # <@U…>
    at: str  # YYYY-MM-DD HH:MM:SS UTC

    def line(self) -> str:
        return f"entry {self.index}: {self.by} pressed stop at {self.at}"

    def as_json(self) -> dict[str, Any]:
        return {"index": self.index, "by": self.by, "at": self.at}


def run_steps(entries: Sequence[Entry], first: int, through: int | None = None) -> list[Step]:
    """The steps a run answering entry `first` showed, or would show, as its log stands
    through entry `through` (None: to its end): what the live cards of such a run show."""
    upto = [e for e in entries if through is None or e.index <= through]
    return steps(upto, first)


def stops(entries: Sequence[Entry]) -> list[Stop]:
    """Every stop the entries record, in order."""
    found = []
    for entry in entries:
        if isinstance(entry, SystemEntry):
            match = _STOP.match(entry.content)
            if match is not None:
                found.append(Stop(entry.index, match.group(1), match.group(2)))
    return found


def step_line(step: Step) -> str:
    """A step on one line, as its card reads: its title, its status's mark, its source."""
    text = f"{_MARKS.get(step.status, '?')} {step.title} ({step.status})"
    return f"{text} <{step.source}>" if step.source else text
