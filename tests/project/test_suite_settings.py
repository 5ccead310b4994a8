"""The suite runs as well on a busy machine as on a quiet one (issue 33): every test has a
timeout that ends it, child processes included (tests/process_check.py); Hypothesis sets no
wall-clock deadline or health check on any test; the tests that start real processes, the
benchmarks' smoke runs and the real-model tier are steps of their own (issue 44)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.cli import ROOT


def test_every_test_has_a_timeout_that_fails_it_in_its_own_thread(pytestconfig):
    assert float(pytestconfig.getini("timeout")) > 0
    # The signal method raises in the test (its fixtures tear down, its processes are
    # stopped); the thread method would end the whole worker.
    assert pytestconfig.getini("timeout_method") == "signal"


def test_hypothesis_runs_with_the_suites_profile():
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check


def test_processes_benchmarks_and_the_real_model_are_not_in_the_default_run(pytestconfig):
    addopts = pytestconfig.getini("addopts")
    assert addopts[addopts.index("-m") + 1] == "not processes and not bench and not real_model"


def test_the_processes_folder_marks_its_own_tests_and_no_other(request):
    """`pytest -m processes` (the Makefile's `test-processes`) runs exactly tests/processes/."""
    from tests.processes import conftest

    class Item:
        def __init__(self, path: Path) -> None:
            self.path, self.markers = path, []

        def add_marker(self, marker: pytest.MarkDecorator) -> None:
            self.markers.append(marker.name)

    inside, beside = Item(conftest.HERE / "test_workers.py"), Item(ROOT / "tests/app/test_x.py")
    conftest.pytest_collection_modifyitems([inside, beside])  # type: ignore[list-item]
    assert (inside.markers, beside.markers) == (["processes"], [])
