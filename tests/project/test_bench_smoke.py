"""Each benchmark starts and finishes at its smallest size (`python -m bench NAME --smoke`).

The benchmarks themselves are not part of the test suite (the full run takes minutes); this
only shows that none of them is broken. Smoke runs never write bench/RESULTS.md. Marked
`bench`: not in the default run, which they would slow down most; `.ci/run` runs them in a
step of their own (`pytest -m bench`).

However a run ends, no process of it is left: a timed-out run is killed with everything it
started (`ProcessGroup`), and a benchmark stopped by SIGTERM stops its app processes first.
"""

from __future__ import annotations

import signal
import sys

import pytest

from bench.__main__ import BENCHMARKS
from tests.cli import ROOT
from tests.process import ProcessGroup, clean_env
from tests.process_check import EXIT_GRACE, descendants, started_since, still_running

pytestmark = pytest.mark.bench

# A smoke run's own bound, far above any on 2 busy cores; the test's is a minute more, so a
# run that hangs fails here, with its output, rather than by pytest-timeout.
SMOKE_SECONDS = 900


def bench(*args: str) -> ProcessGroup:
    return ProcessGroup([sys.executable, "-m", "bench", *args], env=clean_env(), cwd=ROOT)


@pytest.mark.timeout(SMOKE_SECONDS + 60)
@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_benchmark_runs_at_smoke_size(name: str) -> None:
    with bench(name, "--smoke") as run:
        code = run.wait(SMOKE_SECONDS)
    stdout, stderr = run.stdout.text, run.stderr.text
    assert code == 0, stdout + stderr
    assert f"== {name}" in stdout
    assert "failed" not in stdout
    assert "appended to" not in stdout  # only full runs are recorded


def test_a_benchmark_stopped_by_sigterm_stops_its_app_first() -> None:
    """SIGTERM (`kill`, `timeout`) ends `python -m bench` as Ctrl-C does: the app processes
    it started are stopped on the way out, not left to run on, handed to init."""
    before = descendants()
    with bench("cpu", "--smoke") as run:
        serve = started_since(before, "assistant.cli serve", SMOKE_SECONDS)
        run.process.send_signal(signal.SIGTERM)
        code = run.wait(SMOKE_SECONDS)
    assert code == 128 + signal.SIGTERM, run.stderr.text
    assert not still_running(frozenset({serve}), EXIT_GRACE)
