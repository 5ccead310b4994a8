"""Spend limits from the command line (docs/command-line.md): `assistant channels set …
--daily-budget/--monthly-budget` for a channel and a workspace default (`*`), one-line errors
with exit status 2, and `assistant usage` showing each budget beside what it has spent."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from context.spend import periods
from context.storage import open_store
from tests.cli import run_cli


def _prior(model: str | None, prompt: int, cached: int, completion: int) -> int:
    return prompt + completion


def test_budgets_are_set_per_channel_and_as_a_workspace_default_and_shown_beside_spend(
    tmp_path,
):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    open_store(url).close()
    env = {"DATABASE_URL": url}
    result = run_cli("channels", "set", "T1", "*", "--daily-budget", "$5", env=env)
    assert result.returncode == 0, result.stderr
    result = run_cli(
        "channels", "set", "T1", "C1", "--monthly-budget", "2M tokens", "--daily-budget", "0.5",
        env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "daily_budget=0.5 monthly_token_budget=2000000" in result.stdout.decode()
    store = open_store(url)
    try:
        day, month = periods(datetime.now(UTC))
        limits = [(day, 2_000_000), (month, 2_000_000)]
        hold = store.reserve("T1", "C1", "tokens", 1_000, limits, _prior)
        store.settle(hold, 600)
        store.reserve("T1", "C1", "tokens", 400, limits, _prior)  # a call under way
    finally:
        store.close()

    shown = run_cli("usage", env=env).stdout.decode()
    assert f"T1/*  daily $5 for {day.name}: $0 spent (0%)" in shown
    assert f"T1/C1  daily $0.50 for {day.name}: $0 spent (0%)" in shown
    assert f"T1/C1  monthly 2,000,000 tokens for {month.name}: 600 tokens spent (0%), " in shown
    report = json.loads(run_cli("usage", "--json", env=env).stdout)
    assert {
        "workspace": "T1",
        "channel": "C1",
        "budget": "monthly",
        "unit": "tokens",
        "period": month.name,
        "limit": 2_000_000,
        "spent": 600,
        "held": 400,
    } in report["budgets"]

    # Taken back to the default's: the channel's daily budget is the workspace's again.
    result = run_cli("channels", "set", "T1", "C1", "--unset", "daily_budget", env=env)
    assert result.returncode == 0, result.stderr
    assert f"T1/C1  daily $5 for {day.name}" in run_cli("usage", env=env).stdout.decode()


@pytest.mark.parametrize(
    ("amount", "error"),
    [
        ("five", "'five' is not an amount"),
        ("2M", "'2M' is not an amount"),
        ("1.5 tokens", "'1.5 tokens' is not a whole number of tokens"),
        ("-3", "'-3' is not an amount"),
        ("2000000", "daily_budget: Input should be less than or equal to 1000000"),
    ],
)
def test_a_budget_that_is_not_an_amount_is_one_line_with_status_2(tmp_path, amount, error):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    open_store(url).close()
    result = run_cli(
        "channels", "set", "T1", "C1", "--daily-budget", amount, env={"DATABASE_URL": url}
    )
    assert result.returncode == 2
    # argparse's usage, then one line; or the settings' one line.
    assert error in result.stderr.decode().strip().splitlines()[-1]
