"""Spend limits: the periods and notes (`context.spend`) and their store (`SpendStore`), on
SQLite and PostgreSQL; two writers racing on PostgreSQL never pass a budget."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from sqlalchemy.exc import DBAPIError

from context.entry import UserContent
from context.spend import (
    BudgetReached,
    Hold,
    Settlement,
    SpendLimits,
    periods,
    shown_amount,
    shown_reset,
    told_before,
)
from context.storage import EntryMeta, ThreadKey, open_store

NOON = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
DAY, MONTH = periods(NOON)


def _tokens(model: str | None, prompt: int, cached: int, completion: int) -> int:
    return prompt + completion


def test_periods_are_the_utc_day_and_month_and_say_when_they_reset():
    day, month = periods(datetime(2026, 12, 31, 23, 59, tzinfo=UTC))
    assert (day.name, month.name) == ("2026-12-31", "2026-12")
    assert day.end == month.end == datetime(2027, 1, 1, tzinfo=UTC)
    assert shown_reset(day) == "00:00 UTC"
    assert shown_reset(month) == "2027-01-01 00:00 UTC"
    assert shown_amount("usd", 5_000_000) == "$5"
    assert shown_amount("usd", 250_000) == "$0.25"
    assert shown_amount("tokens", 200_000) == "200,000 tokens"
    assert SpendLimits(daily_usd=5).of("usd") == (5_000_000, None)


def test_a_thread_is_told_once_per_budget_and_period():
    reached = BudgetReached("usd", DAY, 5_000_000, 4_990_000)
    assert reached.head.startswith(
        "Budget: this channel has reached its daily budget of $5 for 2026-11-29 (UTC); "
        "it resets at 00:00 UTC."
    )
    told = f'{reached.head}. The user was told: "…"'
    assert told_before([told], reached)
    assert not told_before([f"{reached.head}. The thread was not told again."], reached)
    tomorrow = BudgetReached("usd", periods(datetime(2026, 11, 30, tzinfo=UTC))[0], 5_000_000, 0)
    assert not told_before([told], tomorrow)
    raised = BudgetReached("usd", DAY, 8_000_000, 0)  # an admin raised it: told again
    assert not told_before([told], raised)


def test_a_reservation_holds_the_worst_case_until_settled(store):
    limits = [(DAY, 1000), (MONTH, None)]
    hold = store.reserve("T1", "C1", "tokens", 600, limits, _tokens)
    assert isinstance(hold, Hold)
    refused = store.reserve("T1", "C1", "tokens", 600, limits, _tokens)
    assert refused == BudgetReached("tokens", DAY, 1000, 600)
    assert store.settle(hold, 300, limits) == []  # 300 of 1000: no warning
    rows = {(r[2], r[3]): r[4:] for r in store.spend("T1", [DAY.name, MONTH.name])}
    assert rows == {(DAY.name, "tokens"): (300, 0), (MONTH.name, "tokens"): (300, 0)}
    second = store.reserve("T1", "C1", "tokens", 600, limits, _tokens)
    assert isinstance(second, Hold)
    warned = store.settle(second, 550, limits)  # 850 of 1000: past 80%, told once
    assert [(w.period.kind, w.spent) for w in warned] == [("daily", 850)]
    third = store.reserve("T1", "C1", "tokens", 100, limits, _tokens)
    assert store.settle(third, 50, limits) == []
    assert store.reserve("T1", "C1", "tokens", 101, limits, _tokens) == BudgetReached(
        "tokens", DAY, 1000, 900
    )
    assert isinstance(store.reserve("T1", "C1", "tokens", 100, limits, _tokens), Hold)
    # Another channel, another unit: apart.
    assert isinstance(store.reserve("T1", "C2", "tokens", 1000, limits, _tokens), Hold)
    assert isinstance(store.reserve("T1", "C1", "usd", 1000, limits, _tokens), Hold)


def test_a_refused_month_holds_nothing_in_the_day(store):
    limits = [(DAY, 1000), (MONTH, 500)]
    assert store.reserve("T1", "C1", "tokens", 600, limits, _tokens) == BudgetReached(
        "tokens", MONTH, 500, 0
    )
    assert store.spend("T1", [DAY.name]) == []  # the day's row was rolled back with it


def test_a_month_reached_while_the_day_is_not_holds_nothing_in_either(store):
    assert isinstance(
        store.reserve("T1", "C1", "tokens", 400, [(DAY, 1000), (MONTH, 2000)], _tokens), Hold
    )
    limits = [(DAY, 1000), (MONTH, 450)]  # the month's lowered: 400 held, 100 more passes it
    assert store.reserve("T1", "C1", "tokens", 100, limits, _tokens) == BudgetReached(
        "tokens", MONTH, 450, 400
    )
    rows = {r[2]: r[5] for r in store.spend("T1", [DAY.name, MONTH.name])}
    assert rows == {DAY.name: 400, MONTH.name: 400}  # the day's hold of the refused call undone


def test_a_budget_set_mid_period_counts_the_calls_recorded_before_it(store):
    key = ThreadKey("T1", "C1", "1.0")
    at = "2026-11-29T12:00:00Z"
    store.append(key, UserContent(userid="<@U1>", text="hi"), at)
    store.append(key, "a reply", at)
    store.set_usage(key, 1, _usage(model="gpt-x", prompt=700, completion=100))
    # Recorded now (the store's clock): counted in today's period, whichever day that is.
    today, month = periods(datetime.now(UTC))
    limits = [(today, 1000), (month, None)]
    assert store.reserve("T1", "C1", "tokens", 300, limits, _tokens) == BudgetReached(
        "tokens", today, 1000, 800
    )


def test_the_write_that_records_a_calls_usage_counts_it_in_place_of_its_hold(store):
    key = ThreadKey("T1", "C1", "2.0")
    limits = ((DAY, 1000), (MONTH, None))
    store.append(key, UserContent(userid="<@U1>", text="hi"), "2026-11-29T12:00:00Z")
    hold = store.reserve("T1", "C1", "tokens", 600, limits, _tokens)
    assert isinstance(hold, Hold)
    counted = Settlement(hold, 300, limits)
    meta = _usage(model="gpt-x", prompt=250, completion=50)
    store.append(key, "a reply", "2026-11-29T12:00:01Z", meta, settle=counted)
    assert counted.warnings == []  # 300 of 1000
    assert not counted.claim()  # counted once: nothing after the call counts it again
    rows = {(r[2], r[3]): r[4:] for r in store.spend("T1", [DAY.name, MONTH.name])}
    assert rows == {(DAY.name, "tokens"): (300, 0), (MONTH.name, "tokens"): (300, 0)}
    # A streamed answer's usage comes last (`set_usage`): counted there, past 80% told.
    second = store.reserve("T1", "C1", "tokens", 600, limits, _tokens)
    assert isinstance(second, Hold)
    streamed = Settlement(second, 550, limits)
    store.set_usage(key, 1, _usage(model="gpt-x", prompt=500, completion=50), streamed)
    assert [(w.period.kind, w.spent) for w in streamed.warnings or []] == [("daily", 850)]
    rows = {(r[2], r[3]): r[4:] for r in store.spend("T1", [DAY.name, MONTH.name])}
    assert rows == {(DAY.name, "tokens"): (850, 0), (MONTH.name, "tokens"): (850, 0)}


def test_a_write_that_records_no_usage_leaves_the_call_to_be_counted_after_it(store):
    key = ThreadKey("T1", "C1", "3.0")
    limits = ((DAY, 1000), (MONTH, None))
    store.append(key, UserContent(userid="<@U1>", text="hi"), "2026-11-29T12:00:00Z")
    hold = store.reserve("T1", "C1", "tokens", 600, limits, _tokens)
    assert isinstance(hold, Hold)
    counted = Settlement(hold, 300, limits)
    # Not recorded (another writer took the index): nothing counted, the hold still held.
    meta = _usage(model="gpt-x", prompt=250, completion=50)
    assert store.append(key, "late", "2026-11-29T12:00:01Z", meta, 5, settle=counted) is None
    assert counted.warnings is None
    rows = {r[2]: r[4:] for r in store.spend("T1", [DAY.name])}
    assert rows == {DAY.name: (0, 600)}
    # A write that rolls back (here: a sum past BIGINT) gives its claim back as well.
    overflowing = Settlement(hold, 2**63, limits)
    with pytest.raises((OverflowError, DBAPIError)):
        store.set_usage(key, 0, meta, overflowing)
    assert overflowing.claim() and counted.claim()  # so the call's end counts it, once
    assert store.settle(hold, counted.used, limits) == []
    rows = {r[2]: r[4:] for r in store.spend("T1", [DAY.name])}
    assert rows == {DAY.name: (300, 0)}


def _usage(model: str, prompt: int, completion: int) -> EntryMeta:
    return EntryMeta(
        model=model,
        prompt_tokens=prompt,
        cached_tokens=0,
        completion_tokens=completion,
        latency_ms=10.0,
    )


def test_two_writers_racing_on_postgresql_never_pass_the_budget(postgres_url):
    """Each process's store is its own engine: two threads with two stores are two writers
    to PostgreSQL as two processes are. Every call's usage is its whole reservation, so the
    sum of what was granted can never pass the limit."""
    stores = [open_store(postgres_url), open_store(postgres_url)]
    limits = [(DAY, 10_000), (MONTH, 15_000)]
    granted: list[int] = []
    start = threading.Barrier(2)

    def spend(store) -> None:
        start.wait()
        for _ in range(60):
            hold = store.reserve("T1", "C1", "tokens", 300, limits, _tokens)
            if isinstance(hold, Hold):
                granted.append(hold.amount)
                store.settle(hold, hold.amount, limits)

    try:
        threads = [threading.Thread(target=spend, args=(s,)) for s in stores]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        rows = {r[2]: (r[4], r[5]) for r in stores[0].spend("T1", [DAY.name])}
    finally:
        for s in stores:
            s.close()
    assert sum(granted) == 9_900  # 33 calls of 300 fit in 10,000; the 34th never
    assert rows == {DAY.name: (9_900, 0)}


@pytest.mark.parametrize("bad", [-1, float("inf")])
def test_a_budget_is_a_finite_amount_not_below_zero(bad):
    from pydantic import ValidationError

    from context.channels import ChannelConfig

    with pytest.raises(ValidationError):
        ChannelConfig(team="T1", channel="C1", daily_budget=bad)
