"""Two saved runs side by side (`assistant eval diff RUN_A RUN_B`): each case's pass@1 in A
and in B, matched by the case's id, marked regressed, improved or unchanged, the worst
first; as a table, `--json` or a Markdown report (docs/evaluation.md, "Saved runs").

Neither run is held: B's lines are indexed by where they start, the cases ordered by a small
key each (their change and place), and each case's results read again from its file when it
is written out."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from assistant.eval.runner import CaseResult
from assistant.eval.runs import Results
from assistant.replay.markdown import fenced, inline
from context.render import printable

STATUSES = ("regressed", "improved", "unchanged", "only in A", "only in B")


@dataclass(frozen=True)
class Row:
    status: str
    a: CaseResult | None
    b: CaseResult | None

    @property
    def first(self) -> CaseResult:
        found = self.a or self.b
        assert found is not None
        return found

    @property
    def change(self) -> float | None:
        if self.a is None or self.b is None:
            return None
        return self.b.pass_at_1 - self.a.pass_at_1


class Diff:
    """The rows, worst first: the cases that regressed most, then those unchanged, then those
    that improved; then the cases only one run has, each in its run's order."""

    def __init__(self, a: Results, b: Results) -> None:
        self._a, self._b = a, b
        offsets: dict[str, int] = {}
        for offset, result in b:
            offsets.setdefault(result.id, offset)
        self.counts = dict.fromkeys(STATUSES, 0)
        # (group, change, place, offset in A, offset in B)
        keys: list[tuple[int, float, int, int | None, int | None]] = []
        for place, (offset, result) in enumerate(a):
            other = offsets.pop(result.id, None)
            if other is None:
                keys.append((1, 0.0, place, offset, None))
                self.counts["only in A"] += 1
                continue
            change = b.at(other).pass_at_1 - result.pass_at_1
            keys.append((0, change, place, offset, other))
            self.counts[_status(change)] += 1
        for place, other in enumerate(offsets.values()):
            keys.append((2, 0.0, place, None, other))
            self.counts["only in B"] += 1
        keys.sort()
        self._keys = keys

    def __iter__(self) -> Iterator[Row]:
        for group, change, _, in_a, in_b in self._keys:
            a = self._a.at(in_a) if in_a is not None else None
            b = self._b.at(in_b) if in_b is not None else None
            yield Row(_status(change) if group == 0 else STATUSES[2 + group], a, b)

    def counts_line(self) -> str:
        return ", ".join(f"{count} {status}" for status, count in self.counts.items())


def _status(change: float) -> str:
    if change < 0:
        return "regressed"
    return "improved" if change > 0 else "unchanged"


def _passes(result: CaseResult | None) -> str:
    return "-" if result is None else f"{result.passes}/{len(result.trials)}"


def table(diff: Diff, labels: tuple[str, str], summaries: list[str], out: TextIO) -> None:
    head = ["case", "feedback", f"A {labels[0]}", f"B {labels[1]}", "change"]
    widths = [len(cell) for cell in head]
    for cells in _cells(diff):
        widths = [max(w, len(cell)) for w, cell in zip(widths, cells, strict=True)]
    for row in itertools.chain([head], _cells(diff)):
        line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        out.write(line.rstrip() + "\n")
    for summary in summaries:
        out.write(summary + "\n")
    out.write(diff.counts_line() + "\n")


def _cells(diff: Diff) -> Iterator[list[str]]:
    for row in diff:
        first = row.first
        sides = [_passes(row.a), _passes(row.b)]
        yield [printable(first.id), first.feedback or "", *sides, row.status]


def write_json(diff: Diff, runs: list[dict[str, Any]], out: TextIO) -> None:
    """`{"runs", "counts", "cases"}`, written a case at a time."""
    text = json.dumps({"runs": runs, "counts": diff.counts}, ensure_ascii=False, indent=2)
    out.write(text[: text.rindex("}")].rstrip() + ',\n  "cases": [')
    for number, row in enumerate(diff):
        change = row.change
        item = {
            "case": row.first.id,
            "feedback": row.first.feedback,
            "status": row.status,
            "change": None if change is None else round(change, 4),
            "a": row.a.as_json() if row.a is not None else None,
            "b": row.b.as_json() if row.b is not None else None,
        }
        shown = json.dumps(item, ensure_ascii=False, indent=2).replace("\n", "\n    ")
        out.write(("," if number else "") + "\n    " + shown)
    out.write("\n  ]\n}\n")


def markdown(diff: Diff, labels: tuple[str, str], summaries: list[str], out: TextIO) -> None:
    head = ["# Evaluation: two runs compared", ""]
    head += [f"- {inline(summary)}" for summary in summaries]
    head += [f"- {inline(diff.counts_line())}", "", "## Cases", "", "Worst first.", ""]
    out.write("\n".join(head) + "\n")
    for number, row in enumerate(diff, 1):
        first = row.first
        lines = [f"### {number}. {inline(first.id)}: {row.status}", ""]
        for side, label, result in (("A", labels[0], row.a), ("B", labels[1], row.b)):
            if result is not None:
                lines.append(f"- {side} {inline(label)}: {_passes(result)} passed")
        if row.status in ("regressed", "improved"):
            lines += ["", "Recorded:", "", *fenced(first.reference_shown.splitlines())]
            for side, result in (("A", row.a), ("B", row.b)):
                assert result is not None
                lines += ["", f"{side}:", "", *fenced(result.answer_shown.splitlines())]
        lines.append("")
        out.write("\n".join(lines) + "\n")
