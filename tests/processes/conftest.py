"""The third tier: tests that start real processes (an `assistant` command or `python -m
bench` as a subprocess, several processes on one store, signals, kills, pytest inside pytest,
a wheel built by pip). Every test under this folder is marked `processes`, which plain `pytest`
(the README's command) leaves out: `pytest -m processes` runs them (`make test-processes`)."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Called with every item of the session, wherever this conftest lives: only ours.
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.processes)
