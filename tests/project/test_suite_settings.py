"""The suite runs as well on a busy machine as on a quiet one (issue 33): every test has a
timeout that ends it, child processes included (tests/process_check.py); Hypothesis sets no
wall-clock deadline or health check on any test; the benchmarks' smoke runs and the
real-model tier are steps of their own."""

from __future__ import annotations

from hypothesis import HealthCheck, settings


def test_every_test_has_a_timeout_that_fails_it_in_its_own_thread(pytestconfig):
    assert float(pytestconfig.getini("timeout")) > 0
    # The signal method raises in the test (its fixtures tear down, its processes are
    # stopped); the thread method would end the whole worker.
    assert pytestconfig.getini("timeout_method") == "signal"


def test_hypothesis_runs_with_the_suites_profile():
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check


def test_the_benchmarks_smoke_runs_and_the_real_model_are_not_in_the_default_run(pytestconfig):
    addopts = pytestconfig.getini("addopts")
    assert addopts[addopts.index("-m") + 1] == "not bench and not real_model"
