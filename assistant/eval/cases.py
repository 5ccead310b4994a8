"""The cases of a log: one per recorded model decision (docs/architecture.md#eval).

A decision is one model reply: its tool calls, recorded as consecutive assistant entries. With
the store's side metadata, a reply starts at the entry that carries its model call's figures
and takes the assistant entries up to the next such entry (a getThreadHistory result may come
between two calls of one reply); a log file has no metadata, so there each run of consecutive
assistant entries is one decision."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from context.entry import AssistantEntry, Entry
from context.storage import EntryMeta, Vote

# What the people's feedback on a post in the reference makes of the case: a 👎 step is one
# to beat, not to match; a 👍 step one to keep.
Feedback = Literal["beat", "keep"]


@dataclass(frozen=True)
class Case:
    """One decision: the log before it (`log[:at]`), and the recorded step (`reference`)."""

    source: str  # the log file or the thread TEAM/CHANNEL/THREAD_TS
    log: Sequence[Entry]  # the whole recorded log (shared by the cases of one log)
    at: int  # the index of the reference's first entry
    reference: tuple[AssistantEntry, ...]
    feedback: Feedback | None = None
    model: str | None = None  # its channel's own model (ASSISTANT_MODEL when None)

    @property
    def id(self) -> str:
        return f"{self.source}@{self.at}"

    @property
    def before(self) -> Sequence[Entry]:
        return self.log[: self.at]

    def as_json(self) -> dict[str, Any]:
        """The case as the eval set's file stores it beside its log."""
        return {
            "at": self.at,
            "reference": [entry.index for entry in self.reference],
            "feedback": self.feedback,
        }


def decisions(entries: Sequence[Entry], metadata: Sequence[EntryMeta] | None) -> list[list[int]]:
    """The indexes of each decision's entries, in log order."""
    found: list[list[int]] = []
    current: list[int] | None = None
    for entry in entries:
        if not isinstance(entry, AssistantEntry):
            if metadata is None:
                current = None  # without figures, anything else between calls ends a reply
            continue
        meta = metadata[entry.index] if metadata is not None else None
        starts = current is None or (meta is not None and meta.model is not None)
        if starts:
            current = [entry.index]
            found.append(current)
        else:
            assert current is not None
            current.append(entry.index)
    return found


def feedback_of(reference: Sequence[int], votes: Sequence[Vote]) -> Feedback | None:
    """A 👎 on a post of the step makes it one to beat (whatever else was said); a 👍 alone,
    one to keep."""
    said = {vote.vote for vote in votes if vote.answer in reference}
    if "bad" in said:
        return "beat"
    return "keep" if "good" in said else None


def cases_of(
    source: str,
    entries: Sequence[Entry],
    metadata: Sequence[EntryMeta] | None = None,
    votes: Sequence[Vote] = (),
    model: str | None = None,
) -> Iterator[Case]:
    """Every decision of the log as a case (a decision at entry 0 has no log before it)."""
    if metadata is not None and len(metadata) != len(entries):
        metadata = None  # figures that do not match the log are not trusted to split it
    for indexes in decisions(entries, metadata):
        if indexes[0] == 0:
            continue
        reference = tuple(e for e in (entries[i] for i in indexes) if isinstance(e, AssistantEntry))
        yield Case(source, entries, indexes[0], reference, feedback_of(indexes, votes), model)


def case_of_json(
    source: str, entries: Sequence[Entry], data: object, model: str | None = None
) -> Case:
    """A case as an eval set's file stores it; ValueError saying what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("a case must be an object")
    at, reference, feedback = data.get("at"), data.get("reference"), data.get("feedback")
    if not isinstance(at, int) or isinstance(at, bool) or not 1 <= at < len(entries):
        raise ValueError(f"`at` must be an entry index from 1 to {len(entries) - 1}")
    if not isinstance(reference, list) or not _indexes_from(reference, at, len(entries)):
        raise ValueError(
            "`reference` must be the increasing indexes of the step's entries, from `at` on"
        )
    steps = [entries[i] for i in reference]
    calls = [entry for entry in steps if isinstance(entry, AssistantEntry)]
    if len(calls) != len(steps):
        raise ValueError("`reference` names an entry that is not a tool call")
    if feedback is not None and feedback not in ("beat", "keep"):
        raise ValueError('`feedback` must be null, "beat" or "keep"')
    return Case(source, entries, at, tuple(calls), feedback, model)


def _indexes_from(value: object, at: int, size: int) -> bool:
    if not isinstance(value, list) or not value or value[0] != at:
        return False
    if not all(type(i) is int and at <= i < size for i in value):
        return False
    return all(a < b for a, b in itertools.pairwise(value))
