"""What `assistant eval` shows: a table on the terminal, `--json`, and the Markdown report
(`--report FILE`) whose cases set the recorded step beside the new one in the console
trace's emoji format. With `--against`, the two configurations side by side, the cases the
configuration under test does worse on first."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assistant.eval.ask import Config
from assistant.eval.runner import CaseResult, Totals
from assistant.eval.scores import wilson
from assistant.replay.markdown import fenced, inline
from context.render import printable


@dataclass(frozen=True)
class Run:
    """One configuration's results."""

    config: Config
    results: list[CaseResult]
    totals: Totals


def summary_line(run: Run, k: int) -> str:
    t = run.totals
    line = f"{run.config.label}: {t.cases} cases x {k} trials: pass@1 {_rate(t.pass_at_1)}"
    if k > 1:
        line += f" {_interval(wilson(t.passes, t.trials))}"
    line += f", pass^{k} {_rate(t.pass_k)}"
    if k > 1:
        line += f" {_interval(wilson(t.all_passed, t.cases))}"
    return f"{line}, {t.errors} errors"


def table(runs: Sequence[Run], k: int) -> str:
    """One row a case: its reference's kind and each configuration's passes."""
    labels = [run.config.label for run in runs]
    rows = [["case", "feedback", "reference", *labels]]
    if len(runs) == 2:
        rows[0].append("winner")
    for row in _rows(runs):
        cells = [printable(row[0].id), row[0].feedback or "", row[0].reference_kind]
        cells += [f"{r.passes}/{len(r.trials)} {_kinds(r)}" for r in row]
        if len(runs) == 2:
            cells.append(_winner(row[0], row[1], labels))
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines += [summary_line(run, k) for run in runs]
    return "\n".join(lines) + "\n"


def as_json(runs: Sequence[Run], k: int) -> str:
    document: dict[str, Any] = {
        "configs": [run.config.describe() for run in runs],
        "summary": [run.totals.as_json(k) for run in runs],
        "cases": [],
    }
    labels = [run.config.label for run in runs]
    for row in _rows(runs):
        item: dict[str, Any] = {"case": row[0].id, "results": [r.as_json() for r in row]}
        if len(runs) == 2:
            item["winner"] = _winner(row[0], row[1], labels)
        document["cases"].append(item)
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def markdown(runs: Sequence[Run], k: int) -> str:
    out = ["# Evaluation", ""]
    for run in runs:
        c = run.config
        persona = c.persona_name or "each log's own (entry 0)"
        heat = "the service's default" if c.temperature is None else f"{c.temperature:g}"
        instructions = c.instructions_name or "the fixed system message"
        out.append(
            f"- **{inline(c.label)}**: model `{inline(c.model)}`, persona {inline(persona)}, "
            f"instructions {inline(instructions)}, temperature {heat}"
        )
    out += ["", "## Summary", ""]
    out += [f"- {inline(summary_line(run, k))}" for run in runs]
    out += ["", "## Cases", ""]
    if len(runs) == 2:
        out.append(f"Worse under {inline(runs[0].config.label)} first.")
        out.append("")
    for number, row in enumerate(_rows(runs), 1):
        first = row[0]
        head = f"### {number}. {inline(first.id)}"
        if first.feedback:
            head += " (👎 to beat)" if first.feedback == "beat" else " (👍 to keep)"
        out += [head, ""]
        for run, result in zip(runs, row, strict=True):
            passed = f"{result.passes}/{len(result.trials)} passed"
            out.append(f"- {inline(run.config.label)}: {passed} ({_kinds(result)})")
            problems = sorted({p for t in result.trials for p in t.problems})
            out += [f"  - {inline(problem)}" for problem in problems]
            out += [
                f"  - judge: {t.verdict}: {inline(t.reason or '')}"
                for t in result.trials
                if t.verdict is not None
            ]
        out += ["", "Recorded:", "", *fenced(first.reference_shown.splitlines())]
        for run, result in zip(runs, row, strict=True):
            out += [
                "",
                f"{inline(run.config.label)}:",
                "",
                *fenced(result.answer_shown.splitlines()),
            ]
        out.append("")
    return "\n".join(out)


def _rows(runs: Sequence[Run]) -> list[list[CaseResult]]:
    """Each case's results, one per configuration; compared, the cases where the first
    configuration does worse than the second come first, the worst first."""
    rows = [list(row) for row in zip(*(run.results for run in runs), strict=True)]
    if len(runs) == 2:
        rows.sort(key=lambda row: (row[0].pass_at_1 - row[1].pass_at_1, row[0].number))
    return rows


def _winner(first: CaseResult, second: CaseResult, labels: list[str]) -> str:
    if first.pass_at_1 == second.pass_at_1:
        return "tie"
    return labels[0] if first.pass_at_1 > second.pass_at_1 else labels[1]


def _kinds(result: CaseResult) -> str:
    seen: dict[str, int] = {}
    for trial in result.trials:
        seen[trial.kind] = seen.get(trial.kind, 0) + 1
    return ", ".join(f"{kind} x{n}" if n > 1 else kind for kind, n in seen.items())


def _rate(value: float) -> str:
    return f"{value:.2f}"


def _interval(bounds: tuple[float, float]) -> str:
    return f"[{bounds[0]:.2f}, {bounds[1]:.2f}]"
