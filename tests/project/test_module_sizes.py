"""Modules stay small enough to read whole: no .py file in the packages over 300 lines."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("context", "assistant", "fakes", "bench")
MAX_LINES = 300


def line_counts() -> dict[str, int]:
    return {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def test_no_module_is_over_the_limit():
    over = {name: lines for name, lines in line_counts().items() if lines > MAX_LINES}
    listing = ", ".join(f"{name} ({lines} lines)" for name, lines in sorted(over.items()))
    assert not over, f"over {MAX_LINES} lines, split by what they hold: {listing}"
