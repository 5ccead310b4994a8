"""`assistant usage` against what the fake model reported: the real app answers mentions in two
workspaces, three channels, for two people, with two models (one streamed), on SQLite and on
PostgreSQL; the report's sums, groups, prices and JSON are checked against the usage figures
the fake OpenAI sent."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from assistant.fakes import FakeOpenAI, FakeSlack
from assistant.fakes.openai import responses as replies
from assistant.fakes.requests import event_callback
from context.storage import database_url
from tests.cli import run_cli
from tests.harness import RunningApp, mention

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

MINI = "gpt-4o-mini-2024-07-18"  # a snapshot: priced as its family, gpt-4o-mini
BIG = "gpt-4o"
OTHER_TEAM = "T0OTHERTEAM"
ALICE, BOB = "U0ALICE001", "U0BOB00001"
PRICES = {"gpt-4o-mini": {"input": 0.15, "cached_input": 0.075, "output": 0.6}}


def usage(prompt: int, cached: int, completion: int) -> dict[str, Any]:
    """A usage object as OpenAI reports it (cached tokens are part of the prompt's)."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


POST = ("postMessage", {"text": "Here.", "reasoning": "answer"})
FINISH = ("finishRequest", {"reasoning": "done"})


def ask(app: RunningApp, slack: FakeSlack, event: dict[str, Any], team: str | None = None) -> None:
    """Send a mention (from another workspace with `team`) and wait until it is answered."""
    before = len(slack.calls_to("reactions.remove"))
    payload = event_callback(event, team_id=team) if team else None
    assert app.send_event(event, payload=payload).status == 200
    slack.wait_for_call("reactions.remove", count=before + 1)
    app.wait_idle()


def answered(make_app, slack: FakeSlack, model: FakeOpenAI, url: str) -> None:
    """Three answers, four model calls, in the store at `url`:
    - C1 (our workspace), Alice, MINI: one call (1000 in, 200 cached, 50 out);
    - C2 (ours), Bob, MINI: two calls (2000/0/100, then 3000/1000/10);
    - C3 (the other workspace), Alice, BIG streamed: one call (500/0/20)."""
    mini = make_app(database_url=url, assistant_model=MINI)
    model.script(
        replies.tool_calls(POST, FINISH, usage=usage(1000, 200, 50)),
        replies.tool_calls(POST, usage=usage(2000, 0, 100)),
        replies.tool_calls(FINISH, usage=usage(3000, 1000, 10)),
    )
    ask(mini, slack, mention(slack, "first", user=ALICE, channel="C0USAGE001", ts="1.000001"))
    ask(mini, slack, mention(slack, "second", user=BOB, channel="C0USAGE002", ts="2.000001"))
    # The second app is the other workspace's: its token's auth.test says so, and one bot
    # token answers only its own workspace's threads.
    slack.team_id = OTHER_TEAM
    big = make_app(database_url=url, assistant_model=BIG, assistant_stream="auto")
    model.script(replies.tool_calls(POST, FINISH, usage=usage(500, 0, 20)))
    third = mention(slack, "third", user=ALICE, channel="C0USAGE003", ts="3.000001")
    ask(big, slack, third, team=OTHER_TEAM)
    # Streamed: its usage came last and was written to the reply's first entry afterwards.
    assert model.requests[-1]["stream"] is True
    assert len(model.requests) == 4


def report(url: str, *args: str, cwd, prices: str | None = None) -> dict[str, Any]:
    env = {"DATABASE_URL": url, **({"ASSISTANT_PRICES": prices} if prices else {})}
    result = run_cli("usage", "--json", *args, env=env, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def counts(calls: int, answers: int | None, tokens: tuple[int, int, int]) -> dict[str, Any]:
    return {
        "calls": calls,
        "judge_calls": 0,
        "answers": answers,
        "input_tokens": tokens[0],
        "cached_tokens": tokens[1],
        "output_tokens": tokens[2],
    }


def rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "cost_usd"} for row in document["groups"]]


def test_usage_sums_what_the_model_reported_by_every_grouping(
    make_app, slack, model, store_url, tmp_path
):
    answered(make_app, slack, model, store_url)
    whole = report(store_url, cwd=tmp_path)
    assert whole == {
        "since": None,
        "until": None,
        "by": None,
        "currency": "USD",
        "price_table": False,
        "unpriced_models": [BIG, MINI],
        "groups": [],
        "total": {**counts(4, 3, (6500, 1200, 180)), "cost_usd": None},
        "budgets": [],  # no spend limit set (tests/commands/test_budgets_cli.py)
    }
    assert rows(report(store_url, "--by", "workspace", cwd=tmp_path)) == [
        {"workspace": "T0FAKETEAM", **counts(3, 2, (6000, 1200, 160))},
        {"workspace": OTHER_TEAM, **counts(1, 1, (500, 0, 20))},
    ]
    assert rows(report(store_url, "--by", "channel", cwd=tmp_path)) == [
        {"workspace": "T0FAKETEAM", "channel": "C0USAGE002", **counts(2, 1, (5000, 1000, 110))},
        {"workspace": "T0FAKETEAM", "channel": "C0USAGE001", **counts(1, 1, (1000, 200, 50))},
        {"workspace": OTHER_TEAM, "channel": "C0USAGE003", **counts(1, 1, (500, 0, 20))},
    ]
    assert rows(report(store_url, "--by", "user", cwd=tmp_path)) == [
        {"user": BOB, **counts(2, 1, (5000, 1000, 110))},
        {"user": ALICE, **counts(2, 2, (1500, 200, 70))},
    ]
    by_model = report(store_url, "--by", "model", cwd=tmp_path)
    assert rows(by_model) == [
        {"model": MINI, **counts(3, None, (6000, 1200, 160))},
        {"model": BIG, **counts(1, None, (500, 0, 20))},
    ]
    assert by_model["total"]["answers"] == 3
    # Alice's first thread was a day earlier: by day, and in windows.
    yesterday = backdate(store_url, "C0USAGE001", days=1)
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    assert rows(report(store_url, "--by", "day", cwd=tmp_path)) == [
        {"day": yesterday, **counts(1, 1, (1000, 200, 50))},
        {"day": today, **counts(3, 2, (5500, 1000, 130))},
    ]
    recent = report(store_url, "--since", today, cwd=tmp_path)
    assert recent["since"] == f"{today}T00:00:00Z"
    assert recent["total"] == {**counts(3, 2, (5500, 1000, 130)), "cost_usd": None}
    before = report(store_url, "--since", "3d", "--until", today, cwd=tmp_path)
    assert before["total"] == {**counts(1, 1, (1000, 200, 50)), "cost_usd": None}
    assert report(store_url, "--since", "1h", "--until", "30m", cwd=tmp_path)["total"] == {
        **counts(0, 0, (0, 0, 0)),
        "cost_usd": 0.0,
    }


def test_usage_prices_each_model_and_says_which_have_none(
    make_app, slack, model, store_url, tmp_path
):
    answered(make_app, slack, model, store_url)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    # gpt-4o-mini: 4800 fresh input at 0.15, 1200 cached at 0.075, 160 output at 0.6 a million.
    mini_cost = (4800 * 0.15 + 1200 * 0.075 + 160 * 0.6) / 1e6
    by_workspace = report(store_url, "--by", "workspace", cwd=tmp_path, prices=str(prices))
    assert by_workspace["price_table"] is True
    assert by_workspace["unpriced_models"] == [BIG]
    costs = [row["cost_usd"] for row in by_workspace["groups"]]
    assert costs == [round(mini_cost, 6), None]
    assert by_workspace["total"]["cost_usd"] is None
    # Priced in full, given as JSON text: every cost known, the total their sum.
    both = json.dumps({**PRICES, BIG: {"input": 3, "output": 10}})
    by_model = report(store_url, "--by", "model", cwd=tmp_path, prices=both)
    big_cost = (500 * 3 + 20 * 10) / 1e6
    assert [row["cost_usd"] for row in by_model["groups"]] == [
        round(mini_cost, 6),
        round(big_cost, 6),
    ]
    assert by_model["unpriced_models"] == []
    assert by_model["total"]["cost_usd"] == round(mini_cost + big_cost, 6)
    # The text report: one line per group, the total, and what the cost column is.
    text_report = text_lines(store_url, both, tmp_path)
    assert text_report[0] == "usage from the start to now, by workspace"
    assert text_report[1].split() == [
        "workspace", "calls", "answers", "input", "tokens", "cached", "tokens", "output",
        "tokens", "cost", "(USD)",
    ]  # fmt: skip
    assert text_report[2].split() == ["T0FAKETEAM", "3", "2", "6,000", "1,200", "160", "0.0009"]
    assert text_report[3].split() == [OTHER_TEAM, "1", "1", "500", "0", "20", "0.0017"]
    assert text_report[4].split() == ["total", "4", "3", "6,500", "1,200", "180", "0.0026"]
    assert text_report[5].startswith("cost estimated from ASSISTANT_PRICES")
    # Without a price for gpt-4o: its cost is a dash, and the last line says why.
    text_report = text_lines(store_url, str(prices), tmp_path)
    assert text_report[3].split()[-1] == "-"
    assert text_report[5].startswith(f"no price for {BIG} in ASSISTANT_PRICES")
    # No table at all: tokens only, said so.
    plain = run_cli("usage", env={"DATABASE_URL": store_url}, cwd=tmp_path).stdout.decode()
    assert plain.splitlines()[-1].startswith("no price table (ASSISTANT_PRICES): tokens only")


def text_lines(url: str, prices: str, cwd) -> list[str]:
    env = {"DATABASE_URL": url, "ASSISTANT_PRICES": prices}
    result = run_cli("usage", "--by", "workspace", env=env, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return result.stdout.decode().splitlines()


def backdate(url: str, channel: str, days: int) -> str:
    """Move a channel's entries `days` back in time (the store stamps now); that UTC date."""
    at = datetime.now(UTC) - timedelta(days=days)
    engine = create_engine(database_url(url))
    try:
        with engine.begin() as connection:
            connection.execute(
                text(
                    "UPDATE entries SET recorded_at = :at WHERE thread_id IN "
                    "(SELECT id FROM threads WHERE channel = :channel)"
                ),
                {"at": at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "channel": channel},
            )
    finally:
        engine.dispose()
    return at.strftime("%Y-%m-%d")


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["--by", "team"], {}, "invalid choice: 'team'"),
        (["--since", "yesterday"], {}, "not a time: 'yesterday'"),
        (["--until", "99999-01-01"], {}, "not a time: '99999-01-01'"),
        (["--since", "1d", "--until", "2d"], {}, "is not before --until"),
        ([], {"ASSISTANT_PRICES": "{nope"}, "ASSISTANT_PRICES: not JSON"),
        ([], {"ASSISTANT_PRICES": "missing.json"}, "ASSISTANT_PRICES: cannot read missing.json"),
        (
            [],
            {"ASSISTANT_PRICES": '{"gpt-4o": {"input": -1, "output": 1}}'},
            "ASSISTANT_PRICES: gpt-4o.input: Input should be greater than or equal to 0",
        ),
        (
            [],
            {"ASSISTANT_PRICES": '{"gpt-4o": {"input": 1, "outptu": 1}}'},
            "ASSISTANT_PRICES: gpt-4o.output: Field required (and 1 more)",
        ),
        ([], {}, "no store at"),
    ],
)
def test_bad_values_are_one_line_and_exit_2(args, env, says, tmp_path):
    url = f"sqlite:///{tmp_path / 'none.db'}"
    result = run_cli("usage", *args, env={"DATABASE_URL": url, **env}, cwd=tmp_path)
    assert result.returncode == 2
    stderr = result.stderr.decode()
    assert says in stderr
    if not stderr.startswith("usage:"):  # argparse's own errors come after its usage line
        assert stderr.count("\n") == 1, stderr
    assert not (tmp_path / "none.db").exists()
