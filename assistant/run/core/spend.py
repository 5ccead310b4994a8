"""Spend limits around a model call (docs/operations.md#spend-limits): before it, its worst
case held in the channel's daily and monthly budgets (the prompt as counted, the answer at its
cap), in the store that every process shares; after it, the real usage counted in its place.
A call that would pass a budget is not made (`BudgetReached`).

The unit is the model's: micro-dollars of ASSISTANT_PRICES for a model it prices, tokens for
one it does not."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import N_, Words
from assistant.model.attempts import ContextTooLong, ImagesRefused, ModelRefused
from assistant.model.completion import ModelReply
from assistant.slack.connection import SLACK_FAILURES
from context.spend import (
    BudgetReached,
    Hold,
    Period,
    Settlement,
    SpendLimits,
    Unit,
    Warning80,
    micro_dollars,
    periods,
    shown_amount,
)
from context.storage import EntryMeta, Store
from context.storage.async_store import async_store

log = logging.getLogger(__name__)

# Refusals of a request as a whole, before any answer: nothing to bill.
REFUSED_WHOLE = (ContextTooLong, ImagesRefused, ModelRefused)


class Price(Protocol):
    def cost(self, input_tokens: int, cached_tokens: int, output_tokens: int) -> float:
        """In US dollars."""
        ...


class Prices(Protocol):
    """ASSISTANT_PRICES (assistant.settings.prices.PriceTable), which this room may not
    import: the settings are above it."""

    def price_of(self, model: str | None) -> Price | None: ...


def utc_now() -> datetime:
    return datetime.now(UTC)


# Told when a channel's budget passes 80% (the team, the channel, who set the budget in
# Slack or None, and which budget); the app's DMs it (assistant.app).
Warn = Callable[[str, str, str | None, Warning80], Awaitable[None]]


@dataclass(frozen=True)
class Held:
    """A call's hold, and what settling it needs."""

    hold: Hold
    limits: tuple[tuple[Period, int | None], ...]
    model: str
    unit: Unit


class CallHold:
    """The run's model call under way and its hold (`RunContext.call_hold`): counted by the
    first store write that records the call's usage (`take`), which saves the call a write
    of its own; `Spending.settle` counts it after the call when no write did."""

    def __init__(self) -> None:
        self._held: tuple[Spending, Held] | None = None
        self._settlement: Settlement | None = None

    def start(self, spending: Spending, held: Held) -> None:
        self._held, self._settlement = (spending, held), None

    def take(self, usage: EntryMeta | None) -> Settlement | None:
        """The settlement for the write that records the call's `usage` (`usage_of`); None
        for a write with no usage, with no call held, and after the first."""
        if self._held is None or usage is None or usage.latency_ms is None:
            return None
        if self._settlement is not None:
            return None
        spending, held = self._held
        used = spending.used(
            held, usage.model, usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens
        )
        self._settlement = Settlement(held.hold, used, held.limits)
        return self._settlement

    def end(self) -> Settlement | None:
        """The call is over: the settlement a write took, if any."""
        taken, self._held, self._settlement = self._settlement, None, None
        return taken


@dataclass(frozen=True)
class Spending:
    store: Store
    default_model: str  # ASSISTANT_MODEL: a run's model when its channel names none
    prices: Prices | None = None  # None: every model is counted in tokens
    clock: Callable[[], datetime] = utc_now  # tests move the day on
    warn: Warn | None = None

    def unit_of(self, model: str) -> Unit:
        return "usd" if self._price(model) is not None else "tokens"

    def _price(self, model: str | None) -> Price | None:
        return None if self.prices is None else self.prices.price_of(model)

    def amount(self, model: str, unit: Unit, prompt: int, cached: int, answer: int) -> int:
        """A call's tokens in `unit`'s counting (a priced model's in micro-dollars)."""
        if unit == "tokens":
            return prompt + answer
        price = self._price(model)
        return 0 if price is None else micro_dollars(price.cost(prompt, cached, answer))

    def _prior(self, unit: Unit) -> Callable[[str | None, int, int, int], int]:
        """Earlier calls of a period in `unit` (those of models the other unit counts: 0)."""

        def prior(model: str | None, prompt: int, cached: int, completion: int) -> int:
            named = model or self.default_model
            if self.unit_of(named) != unit:
                return 0
            return self.amount(named, unit, prompt, cached, completion)

        return prior

    async def reserve(
        self,
        team: str,
        channel: str,
        limits: SpendLimits,
        model: str | None,
        prompt: int,
        answer_cap: int,
    ) -> Held | BudgetReached | None:
        """The call's worst case held in the channel's budgets of its unit; None when the
        channel has none in that unit (nothing is counted)."""
        named = model or self.default_model
        unit = self.unit_of(named)
        daily, monthly = limits.of(unit)
        if daily is None and monthly is None:
            return None
        day, month = periods(self.clock())
        bounds = ((day, daily), (month, monthly))
        worst = self.amount(named, unit, prompt, 0, answer_cap)
        store = async_store(self.store)
        got = await store.write(
            self.store.reserve, team, channel, unit, worst, bounds, self._prior(unit)
        )
        if isinstance(got, BudgetReached):
            return got
        return Held(got, bounds, named, unit)

    def settlement(
        self, held: Held, reply: ModelReply | None, failed: BaseException | None
    ) -> Settlement:
        """The call's real usage, to be counted in place of its hold: what the server
        reported; nothing for a request the server refused whole (a model, a prompt too long,
        images); else (no usage reported, a call cut off or timed out) the worst case held."""
        if reply is None:
            used = 0 if isinstance(failed, REFUSED_WHOLE) else held.hold.amount
        else:
            used = self.used(
                held, reply.model, reply.prompt_tokens, reply.cached_tokens, reply.completion_tokens
            )
        return Settlement(held.hold, used, held.limits)

    def used(
        self,
        held: Held,
        model: str | None,
        prompt: int | None,
        cached: int | None,
        completion: int | None,
    ) -> int:
        """A reply's usage in the hold's unit; the worst case held when none was reported."""
        if prompt is None:
            return held.hold.amount
        named = model if model and self._price(model) else held.model
        return self.amount(named, held.unit, prompt, cached or 0, completion or 0)

    async def settle(
        self,
        held: Held,
        reply: ModelReply | None,
        failed: BaseException | None,
        limits: SpendLimits,
        team: str,
        channel: str,
        settlement: Settlement | None = None,
        quiet: bool = False,
    ) -> None:
        """After the call: its usage counted in place of its hold (`settlement`), unless the
        write that recorded its usage counted it already (`Settlement.claim`); the budgets
        that passed 80% with it told. `quiet`: no 80% notice is sent or marked sent (a run's
        next call sends it)."""
        if settlement is None or settlement.claim():
            found = self.settlement(held, reply, failed)
            store = async_store(self.store)
            bounds = () if quiet else found.limits
            warnings = await store.write(self.store.settle, found.hold, found.used, bounds)
        else:
            warnings = settlement.warnings or []
        for warning in warnings:
            log.warning(
                "%s/%s has spent %d of its %s budget of %d (%s) for %s",
                team,
                channel,
                warning.spent,
                warning.period.kind,
                warning.limit,
                warning.unit,
                warning.period.name,
            )
            if self.warn is not None:
                await self.warn(team, channel, limits.set_by, warning)


WARNING_80 = N_(
    "Heads-up: <#{channel}> has spent {spent} of its {kind} budget of {limit} for {period} "
    "(UTC). When a call would pass it, I stop answering there until it resets; you can "
    "raise it in my App Home."
)


def tell_who_set_it(client: AsyncWebClient, words: Words) -> Warn:
    """The 80% notice, as a DM from the app to whoever set the budget in the App Home (an
    admin or an editor the admins named: the one accountable for it). A budget set from
    the CLI has no Slack user to tell: the process's log line says it (`Spending.settle`)."""

    async def warn(team: str, channel: str, set_by: str | None, warning: Warning80) -> None:
        if set_by is None:
            return
        kind = words.gettext(N_("daily") if warning.period.kind == "daily" else N_("monthly"))
        text = words.gettext(
            WARNING_80,
            channel=channel,
            spent=shown_amount(warning.unit, warning.spent),
            kind=kind,
            limit=shown_amount(warning.unit, warning.limit),
            period=warning.period.name,
        )
        try:
            await client.chat_postMessage(channel=set_by, text=text)
        except SLACK_FAILURES as exc:
            log.warning("could not tell %s of %s/%s's budget: %s", set_by, team, channel, exc)

    return warn
