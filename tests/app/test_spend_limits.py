"""Spend limits through the Bolt tier (docs/operations.md#spend-limits): a channel's daily
budget reached mid-day stops new model calls, each thread told once; the next day's first
mention is answered (the app's clock moved on, no sleep); whoever set the budget in the App
Home is told once at 80%; an unpriced model counts in tokens. The fake OpenAI reports each
call's usage as OpenAI does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from assistant.run.loop.apologies import budget_note
from context.channels import ChannelConfig
from context.spend import BudgetReached, periods
from tests.harness import answered_log, mention

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = [pytest.mark.app_backend, pytest.mark.listeners]

# A dollar per million tokens, in and out: a call's cost is its tokens in micro-dollars.
PRICES = {"gpt-4o-mini": {"input": 1.0, "output": 1.0}}
ADMIN = "U0ADMIN001"
POST = ("postMessage", {"text": "Here.", "reasoning": "answer"})
FINISH = ("finishRequest", {"reasoning": "done"})


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def answer(tokens: int) -> replies.Completion:
    return replies.tool_calls(POST, FINISH, usage=usage(tokens - 100, 100))


def budget(app, **limits: Any) -> None:
    config = ChannelConfig(team=ids.TEAM_ID, channel=ids.CHANNEL_ID, updated_by=ADMIN, **limits)
    app.assistant.store.set_channel_config(config)


def posts(slack, **where: str) -> list[str]:
    return [
        call.params["text"]
        for call in slack.calls_to("chat.postMessage")
        if all(call.params.get(k) == v for k, v in where.items())
    ]


def test_a_budget_reached_mid_day_stops_calls_with_one_note_per_thread_until_the_next_day(
    make_app, slack, model
):
    clock = Clock(datetime.now(UTC).replace(hour=12, minute=0))
    # Each call's worst case (its prompt and an answer of 1,000 tokens) is held before it.
    app = make_app(assistant_prices=PRICES, assistant_answer_tokens=1_000, clock=clock)
    budget(app, daily_budget=0.02)  # 20,000 tokens' worth
    model.script(answer(9_000), answer(9_500))
    first = mention(slack, "one", ts="100.000001")
    assert answered_log(app, slack, first)[-1]["content"]["toolCall"] == "finishRequest"
    assert posts(slack, channel=ADMIN) == []  # 9,000 of 20,000: under 80%
    second = mention(slack, "two", ts="101.000001")
    answered_log(app, slack, second)
    # 18,500 of 20,000: whoever set the budget in the App Home is told, once.
    [warning] = posts(slack, channel=ADMIN)
    assert f"<#{ids.CHANNEL_ID}> has spent $0.0185 of its daily budget of $0.02" in warning
    assert len(model.requests) == 2

    # The next call's worst case would pass the budget: not made; the thread told once.
    third = mention(slack, "three", ts="102.000001")
    log = answered_log(app, slack, third)
    day = periods(clock.now)[0]
    reached = BudgetReached("usd", day, 20_000, 18_500)
    note = budget_note(reached).english()
    assert note == (
        "This channel has reached its daily budget of $0.02; it resets at 00:00 UTC. "
        "Until then I won't answer here, unless an admin raises it in my App Home."
    )
    assert log[-1]["content"] == f'{reached.head}. The user was told: "{note}"'
    assert posts(slack, thread_ts=third["ts"]) == [note]
    again = mention(slack, "still there?", ts="102.000002", thread_ts=third["ts"])
    log = answered_log(app, slack, again)
    assert log[-1]["content"] == (
        f"{reached.head}. The thread was not told again: it was told earlier in this period."
    )
    assert posts(slack, thread_ts=third["ts"]) == [note]  # nothing more in that thread
    # Another thread of the channel is told too, once.
    follow = mention(slack, "and here?", ts="100.000002", thread_ts=first["ts"])
    answered_log(app, slack, follow)
    assert posts(slack, thread_ts=first["ts"]) == ["Here.", note]
    assert len(model.requests) == 2  # no call made since the budget was reached

    # The next day, the first mention is answered.
    clock.now += timedelta(days=1)
    model.script(answer(1_000))
    fourth = mention(slack, "a new day", ts="103.000001", thread_ts=third["ts"])
    assert answered_log(app, slack, fourth)[-1]["content"]["toolCall"] == "finishRequest"
    assert len(model.requests) == 3
    assert len(posts(slack, channel=ADMIN)) == 1  # still the one notice


def test_an_admin_raising_the_budget_lets_the_channel_be_answered_again(make_app, slack, model):
    clock = Clock(datetime.now(UTC).replace(hour=12, minute=0))
    app = make_app(assistant_prices=PRICES, assistant_answer_tokens=1_000, clock=clock)
    budget(app, daily_budget=0.01)
    model.script(answer(9_500))
    answered_log(app, slack, mention(slack, "one", ts="200.000001"))
    refused = answered_log(app, slack, mention(slack, "two", ts="201.000001"))
    assert refused[-1]["content"].startswith("Budget: ")
    budget(app, daily_budget=0.05)  # raised: the same day, answered
    model.script(answer(1_000))
    raised = answered_log(app, slack, mention(slack, "three", ts="202.000001"))
    assert raised[-1]["content"]["toolCall"] == "finishRequest"


def test_a_model_the_prices_do_not_price_counts_in_tokens(make_app, slack, model):
    clock = Clock(datetime.now(UTC).replace(hour=12, minute=0))
    # No ASSISTANT_PRICES: a dollar budget cannot hold it, a token budget does.
    app = make_app(assistant_answer_tokens=1_000, clock=clock)
    budget(app, daily_budget=0.000001, monthly_token_budget=10_000)
    model.script(answer(9_000))
    answered_log(app, slack, mention(slack, "one", ts="300.000001"))
    log = answered_log(app, slack, mention(slack, "two", ts="301.000001"))
    month = periods(clock.now)[1]
    assert log[-1]["content"].startswith(
        "Budget: this channel has reached its monthly budget of 10,000 tokens for "
        f"{month.name} (UTC); it resets at {month.end:%Y-%m-%d} 00:00 UTC."
    )
    assert len(model.requests) == 1


def test_a_calls_usage_is_counted_in_the_write_that_records_it(make_app, slack, model):
    # The budget check's CPU goal (bench/budgets.py): no transaction of its own after the
    # call; the hold is settled with the usage's entry, both or neither.
    clock = Clock(datetime.now(UTC).replace(hour=12, minute=0))
    app = make_app(assistant_prices=PRICES, assistant_answer_tokens=1_000, clock=clock)
    budget(app, daily_budget=1.0)
    model.script(answer(2_000))
    engine = app.assistant.store._db.engine  # listened to, not replaced
    open_writes: dict[int, list[str]] = {}
    committed: list[list[str]] = []

    def statement(conn, cursor, text, parameters, context, executemany) -> None:
        open_writes.setdefault(id(conn), []).append(" ".join(text.split())[:40])

    def commit(conn) -> None:
        committed.append(open_writes.pop(id(conn), []))

    event.listen(engine, "before_cursor_execute", statement)
    event.listen(engine, "commit", commit)
    try:
        answered_log(app, slack, mention(slack, "one", ts="400.000001"))
    finally:
        event.remove(engine, "before_cursor_execute", statement)
        event.remove(engine, "commit", commit)
    settling = "UPDATE spend SET reserved = reserved -"
    [settled] = [w for w in committed if any(s.startswith(settling) for s in w)]
    assert any(s.startswith(("INSERT INTO entries", "UPDATE entries")) for s in settled), settled
    day = periods(clock.now)[0]
    rows = {r[2]: r[4:] for r in app.assistant.store.spend(ids.TEAM_ID, [day.name])}
    assert rows == {day.name: (2_000, 0)}  # the usage, at $1 a million tokens; nothing held
