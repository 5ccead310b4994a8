"""Spend limits (docs/operations.md#spend-limits): a channel's daily and monthly budgets, the
periods they count in (UTC days and months), the units they count (micro-dollars of
ASSISTANT_PRICES for a model it prices, tokens for one it does not), and the note a thread
gets when a call would pass one.

Pure values and rules: the store keeps what each period spent and holds
(`context.storage.spend`), the run reserves before each model call
(`assistant.run.core.spend`).
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from context.entry import BUDGET_PREFIX

Unit = Literal["usd", "tokens"]
PeriodKind = Literal["daily", "monthly"]

# Dollars are counted in millionths, as integers: a sum of floats drifts, and an atomic
# `spent + reserved + :amount <= :limit` in SQL must compare exactly on every database.
MICRO = 1_000_000

_TOLD = re.compile(r"\. The user was told: ")


@dataclass(frozen=True)
class SpendLimits:
    """A channel's budgets in force (its own over its workspace default's); None: no limit."""

    daily_usd: float | None = None
    monthly_usd: float | None = None
    daily_tokens: int | None = None
    monthly_tokens: int | None = None
    # Who set them in Slack (the App Home), to be told at 80%; None: set from the CLI.
    set_by: str | None = None

    def of(self, unit: Unit) -> tuple[int | None, int | None]:
        """The daily and monthly limits in `unit`'s counting (micro-dollars or tokens)."""
        if unit == "tokens":
            return self.daily_tokens, self.monthly_tokens
        return _micro(self.daily_usd), _micro(self.monthly_usd)

    @property
    def any(self) -> bool:
        return any(
            v is not None
            for v in (self.daily_usd, self.monthly_usd, self.daily_tokens, self.monthly_tokens)
        )


def limits_of(values: Mapping[str, object], set_by: str | None = None) -> SpendLimits:
    """The budgets among a channel's settings in force (`context.channels.merged`)."""
    return SpendLimits(
        _number(values.get("daily_budget")),
        _number(values.get("monthly_budget")),
        _whole(values.get("daily_token_budget")),
        _whole(values.get("monthly_token_budget")),
        set_by,
    )


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _whole(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _micro(dollars: float | None) -> int | None:
    return None if dollars is None else round(dollars * MICRO)


def micro_dollars(dollars: float) -> int:
    """A cost in micro-dollars, rounded up: a reservation never holds less than the cost."""
    return math.ceil(dollars * MICRO - 1e-9)


@dataclass(frozen=True)
class Period:
    """One UTC day (`2026-11-29`) or month (`2026-11`) a budget counts in."""

    kind: PeriodKind
    name: str
    start: datetime
    end: datetime  # when the next one starts: the budget resets then


def periods(at: datetime) -> tuple[Period, Period]:
    """The UTC day and month `at` falls in."""
    at = at.astimezone(UTC)
    day = datetime(at.year, at.month, at.day, tzinfo=UTC)
    month = datetime(at.year, at.month, 1, tzinfo=UTC)
    next_month = datetime(at.year + at.month // 12, at.month % 12 + 1, 1, tzinfo=UTC)
    return (
        Period("daily", day.strftime("%Y-%m-%d"), day, day + timedelta(days=1)),
        Period("monthly", month.strftime("%Y-%m"), month, next_month),
    )


def shown_amount(unit: Unit, amount: int) -> str:
    """A limit or a sum as people read it: `$5`, `$0.25`, `200,000 tokens`."""
    if unit == "tokens":
        return f"{amount:,} tokens"
    dollars = amount / MICRO
    if amount % MICRO == 0:
        return f"${dollars:,.0f}"
    if amount % 10_000 == 0:  # whole cents
        return f"${dollars:,.2f}"
    return f"${dollars:,.6f}".rstrip("0")  # a small sum shown as it is, not as $0.00


def shown_reset(period: Period) -> str:
    """When the period's budget resets, as the note says it: `00:00 UTC` (the next day's
    start) or `2026-12-01 00:00 UTC` (the next month's)."""
    if period.kind == "daily":
        return "00:00 UTC"
    return period.end.strftime("%Y-%m-%d 00:00 UTC")


@dataclass(frozen=True)
class BudgetReached:
    """A call refused: which budget, how much, in which period."""

    unit: Unit
    period: Period
    limit: int  # in `unit`'s counting
    spent: int  # spent and held when the call was asked for

    @property
    def head(self) -> str:
        """The entry's text before its outcome: the same for every refusal of this budget
        (this limit, this period), so the thread is told once per budget and period."""
        return (
            f"{BUDGET_PREFIX}this channel has reached its {self.period.kind} budget of "
            f"{shown_amount(self.unit, self.limit)} for {self.period.name} (UTC); "
            f"it resets at {shown_reset(self.period)}. No model call was made"
        )


def told_before(system_texts: list[str], reached: BudgetReached) -> bool:
    """Whether the thread was already told of this budget in this period: a `Budget:`
    entry with the same head that says the thread was told (not one that could not be)."""
    head = reached.head
    return any(
        text.startswith(head) and _TOLD.match(text, len(head)) is not None for text in system_texts
    )


@dataclass(frozen=True)
class Hold:
    """A call's reservation: `amount` held in each of `periods` (their names) until its usage
    is known (`SpendStore.settle`)."""

    team: str
    channel: str
    unit: Unit
    periods: tuple[str, ...]
    amount: int


@dataclass(frozen=True)
class Warning80:
    """A budget that passed 80% with a call just settled: told to the admins once."""

    unit: Unit
    period: Period
    limit: int
    spent: int


class Settlement:
    """A call's hold to be replaced by its real usage (`used`) in the store write that
    records that usage (`Store.append`, `Store.set_usage`): one transaction, not two, on the
    hot path of every call with a budget. Settled once: whoever `claim`s it first settles it
    (that write, or, with no usage recorded, `SpendStore.settle` after the call); a write
    that claimed it and rolled back `release`s it. `warnings` is None until a write that
    settled it commits, then the budgets the call took past 80% (to be told)."""

    def __init__(
        self, hold: Hold, used: int, limits: tuple[tuple[Period, int | None], ...]
    ) -> None:
        self.hold = hold
        self.used = used
        self.limits = limits
        self.warnings: list[Warning80] | None = None
        self._claimed = False
        # The write runs in the store's threads; a run cancelled meanwhile settles on the
        # event loop's thread: one of them only.
        self._lock = threading.Lock()

    def claim(self) -> bool:
        with self._lock:
            taken, self._claimed = self._claimed, True
            return not taken

    def release(self) -> None:
        with self._lock:
            self._claimed, self.warnings = False, None


# What a model's earlier calls in a period cost in a unit: (model, prompt tokens, cached
# tokens, completion tokens) → micro-dollars or tokens; 0 for calls another unit counts.
PriorCost = Callable[[str | None, int, int, int], int]


_AMOUNT = re.compile(
    r"^\s*(?:\$\s*(?P<dollars>\d+(?:\.\d+)?)|(?P<number>\d+(?:\.\d+)?)\s*(?P<scale>[kKmM])?"
    r"(?:\s*(?P<tokens>tokens?))?)\s*$"
)
_SCALES = {"": 1, "k": 1_000, "m": 1_000_000}


def parse_amount(text: str) -> float | int:
    """A budget as people write it: US dollars (`5`, `$0.50`), a float; or tokens (`200000
    tokens`, `200k tokens`, `2M tokens`), an int. ValueError saying what is wrong."""
    found = _AMOUNT.match(text)
    if found is None or (found["scale"] and not found["tokens"]):
        raise ValueError(
            f"{text[:40]!r} is not an amount: US dollars (5, $0.50) or tokens (200000 tokens, "
            "2M tokens)"
        )
    if found["dollars"] is not None:
        return float(found["dollars"])
    if not found["tokens"]:
        return float(found["number"])
    tokens = float(found["number"]) * _SCALES[(found["scale"] or "").lower()]
    if tokens != int(tokens):
        raise ValueError(f"{text[:40]!r} is not a whole number of tokens")
    return int(tokens)


def parse_amounts(text: str) -> tuple[float | None, int | None]:
    """One input holding a budget in dollars, in tokens, or both (`5, 200000 tokens`)."""
    dollars: float | None = None
    tokens: int | None = None
    for part in (p for p in text.split(",") if p.strip()):
        amount = parse_amount(part)
        if isinstance(amount, int):
            if tokens is not None:
                raise ValueError("one amount in tokens at most")
            tokens = amount
        else:
            if dollars is not None:
                raise ValueError("one amount in US dollars at most")
            dollars = amount
    return dollars, tokens


def written_amounts(dollars: float | None, tokens: int | None) -> str | None:
    """What `parse_amounts` reads back as these budgets (None: neither is set)."""
    parts = []
    if dollars is not None:
        parts.append(f"{dollars:.6f}".rstrip("0").rstrip("."))
    if tokens is not None:
        parts.append(f"{tokens} tokens")
    return ", ".join(parts) or None
