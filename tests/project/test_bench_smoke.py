"""Each benchmark starts and finishes at its smallest size (`python -m bench NAME --smoke`).

The benchmarks themselves are not part of the test suite (the full run takes minutes); this
only shows that none of them is broken. Smoke runs never write bench/RESULTS.md.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from bench.__main__ import BENCHMARKS
from tests.cli import ROOT
from tests.process import clean_env


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_benchmark_runs_at_smoke_size(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", name, "--smoke"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=ROOT,
        env=clean_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"== {name}" in done.stdout
    assert "failed" not in done.stdout
    assert "appended to" not in done.stdout  # only full runs are recorded
