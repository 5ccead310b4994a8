"""What a benchmark hands back, how it is printed, and how it is kept in bench/RESULTS.md."""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")
_COLUMNS = ("date", "benchmark", "figure", "value", "goal", "verdict", "cores", "command")


@dataclass(frozen=True)
class Figure:
    """One measured figure; `met` is None when it has no goal (context for other figures)."""

    name: str
    value: str
    goal: str = ""
    met: bool | None = None

    @property
    def verdict(self) -> str:
        if self.met is None:
            return ""
        return "met" if self.met else "MISSED"


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (share in 0..1) of a non-empty sample."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(share * len(ordered))))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def ms(seconds: float) -> str:
    """A duration in the unit that keeps three significant digits readable."""
    if seconds < 0.001:
        return f"{seconds * 1e6:.3g} µs"
    return f"{seconds * 1000:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def machine() -> str:
    """Cores and CPU model: figures are only comparable on the same kind of machine."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = os.cpu_count() or 0
    return f"{cores} ({model})" if model else str(cores)


def print_figures(name: str, figures: Sequence[Figure]) -> None:
    rows = [(f.name, f.value, f.goal, f.verdict) for f in figures]
    widths = [max(len(r[i]) for r in [("figure", "value", "goal", ""), *rows]) for i in range(4)]
    print(f"\n== {name}")
    for row in rows:
        print("  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())


def append_results(
    name: str, figures: Sequence[Figure], command: str, path: Path = RESULTS
) -> None:
    """One dated row per figure, under its own table header so that blocks appended by other
    runs (or other tools) never break it. One write call: concurrent appends do not mix."""
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "",
        "| " + " | ".join(_COLUMNS) + " |",
        "|" + "---|" * len(_COLUMNS),
    ]
    for f in figures:
        cells = (date, name, f.name, f.value, f.goal, f.verdict, machine(), f"`{command}`")
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    with path.open("a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
