"""ModelLimits' calibration of the token estimate by a server's counts: per model, never below
the estimate's own count, bounded, a higher count taken at once and a lower one eased into."""

from __future__ import annotations

import pytest

from assistant.model.limits import MAX_SCALE, ModelLimits, ServerWindow


def test_a_higher_count_is_taken_at_once_and_a_lower_one_eased_into():
    limits = ModelLimits()
    assert limits.calibrate("m", 1_200, 1_000) == pytest.approx(1.2)
    assert limits.calibrate("m", 1_300, 1_000) == pytest.approx(1.3)
    eased = limits.calibrate("m", 1_100, 1_000)
    assert eased is not None and 1.1 < eased < 1.3
    assert limits.window("m") == ServerWindow(None, eased)
    assert limits.window("other") is None  # one model's count never changes another's


def test_a_count_below_the_estimate_s_leaves_it_as_it_is():
    limits = ModelLimits()
    assert limits.calibrate("m", 800, 1_000) == 1.0
    assert limits.window("m") is None


@pytest.mark.parametrize(
    ("server", "estimate"), [(5_000 * MAX_SCALE, 1_000), (500, 100), (-1, 1_000)]
)
def test_counts_out_of_bounds_or_too_small_teach_nothing(server, estimate):
    limits = ModelLimits()
    assert limits.calibrate("m", int(server) + 1, estimate) is None
    assert limits.window("m") is None


def test_a_named_window_keeps_the_larger_of_the_two_scales():
    limits = ModelLimits()
    limits.calibrate("m", 1_200, 1_000)
    limits.remember_window("m", ServerWindow(8_192, 1.1))
    assert limits.window("m") == ServerWindow(8_192, pytest.approx(1.2))
    limits.remember_window("m", ServerWindow(16_000, 1.4))
    assert limits.window("m") == ServerWindow(8_192, 1.4)
