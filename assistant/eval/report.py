"""What `assistant eval` shows: a table on the terminal, `--json`, and the Markdown report
(`--report FILE`) whose cases set the recorded step beside the new one in the console
trace's emoji format. With `--against`, the two configurations side by side, the cases the
configuration under test does worse on first. Each is written a case at a time from the
spooled results (`assistant/eval/spool.py`), never held whole."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from assistant.eval.ask import Config
from assistant.eval.runner import CaseResult, Totals
from assistant.eval.scores import wilson
from assistant.eval.spool import ResultSpool, Rows
from assistant.replay.markdown import fenced, inline
from context.render import printable


@dataclass(frozen=True)
class Run:
    """One configuration's results."""

    config: Config
    results: ResultSpool
    totals: Totals
    # How its tool calls were asked for: "tools" (tool_choice "required") or "json" (the
    # constrained mode), as the probe before the first case found (`assistant eval`).
    mode: str = "tools"


MODES = {
    "tools": 'tool calls with tool_choice "required"',
    "json": "tool calls asked as JSON (the constrained mode: the server ignores tool_choice)",
}


def summary_line(run: Run, k: int) -> str:
    t = run.totals
    line = f"{run.config.label}: {t.cases} cases x {k} trials: pass@1 {_rate(t.pass_at_1)}"
    if k > 1:
        line += f" {_interval(wilson(t.passes, t.trials))}"
    line += f", pass^{k} {_rate(t.pass_k)}"
    if k > 1:
        line += f" {_interval(wilson(t.all_passed, t.cases))}"
    line += f", {t.errors} errors"
    return line + (", tool calls asked as JSON" if run.mode == "json" else "")


def table(runs: Sequence[Run], rows: Rows, k: int, out: TextIO) -> None:
    """One row a case: its reference's kind and each configuration's passes (the rows read
    twice: once for the columns' widths)."""
    labels = [run.config.label for run in runs]
    head = ["case", "feedback", "reference", *labels]
    if len(runs) == 2:
        head.append("winner")
    widths = [len(cell) for cell in head]
    for cells in _cells(rows, labels):
        widths = [max(w, len(cell)) for w, cell in zip(widths, cells, strict=True)]
    for row in itertools.chain([head], _cells(rows, labels)):
        line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        out.write(line.rstrip() + "\n")
    for run in runs:
        out.write(summary_line(run, k) + "\n")


def _cells(rows: Rows, labels: list[str]) -> Iterable[list[str]]:
    for row in rows:
        cells = [printable(row[0].id), row[0].feedback or "", row[0].reference_kind]
        cells += [f"{r.passes}/{len(r.trials)} {_kinds(r)}" for r in row]
        if len(labels) == 2:
            cells.append(_winner(row[0], row[1], labels))
        yield cells


def write_json(runs: Sequence[Run], rows: Rows, k: int, out: TextIO) -> None:
    """One JSON document, `{"configs", "summary", "cases"}`, written a case at a time."""
    head = {
        "configs": [run.config.describe() | {"tool_mode": run.mode} for run in runs],
        "summary": [run.totals.as_json(k) for run in runs],
    }
    text = json.dumps(head, ensure_ascii=False, indent=2)
    out.write(text[: text.rindex("}")].rstrip() + ',\n  "cases": [')
    labels = [run.config.label for run in runs]
    for number, row in enumerate(rows):
        item: dict[str, Any] = {"case": row[0].id, "results": [r.as_json() for r in row]}
        if len(runs) == 2:
            item["winner"] = _winner(row[0], row[1], labels)
        shown = json.dumps(item, ensure_ascii=False, indent=2).replace("\n", "\n    ")
        out.write(("," if number else "") + "\n    " + shown)
    out.write("\n  ]\n}\n")


def markdown(runs: Sequence[Run], rows: Rows, k: int, out: TextIO) -> None:
    head = ["# Evaluation", ""]
    for run in runs:
        c = run.config
        persona = c.persona_name or "each log's own (entry 0)"
        heat = "the service's default" if c.temperature is None else f"{c.temperature:g}"
        instructions = c.instructions_name or "the fixed system message"
        model = f"`{inline(c.model)}`"
        if c.channel_models:
            model += " (a channel's own where it sets one)"
        head.append(
            f"- **{inline(c.label)}**: model {model}, persona {inline(persona)}, "
            f"instructions {inline(instructions)}, temperature {heat}, "
            f"{MODES.get(run.mode, inline(run.mode))}"
        )
    head += ["", "## Summary", ""]
    head += [f"- {inline(summary_line(run, k))}" for run in runs]
    head += ["", "## Cases", ""]
    if len(runs) == 2:
        head.append(f"Worse under {inline(runs[0].config.label)} first.")
        head.append("")
    out.write("\n".join(head) + "\n")
    for number, row in enumerate(rows, 1):
        out.write("\n".join(_case(runs, number, row)) + "\n")


def _case(runs: Sequence[Run], number: int, row: list[CaseResult]) -> list[str]:
    first = row[0]
    title = f"### {number}. {inline(first.id)}"
    if first.feedback:
        title += " (👎 to beat)" if first.feedback == "beat" else " (👍 to keep)"
    out = [title, ""]
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
    return out


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
