"""Spend limits over SQL (`SpendStore`, docs/operations.md#spend-limits): a period's spent
and held sums, reserved and settled with atomic conditional UPDATEs, so that processes
sharing the database never pass a budget by more than their calls' usage exceeded their own
worst case.

A period's row is made when a budget first needs it, its `spent` opened with what the
channel's calls recorded in the period so far (a budget set at noon counts the morning)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, and_, bindparam, func, select, true, update
from sqlalchemy.dialects import postgresql, sqlite

from context.spend import BudgetReached, Hold, Period, PriorCost, Unit, Warning80
from context.storage.engine import Repository
from context.storage.tables import entries_table, moment, spend_table, threads_table

_t = spend_table
# The names are not the columns': an UPDATE takes a parameter named as a column for its SET.
_ROW = and_(
    _t.c.team == bindparam("k_team"),
    _t.c.channel == bindparam("k_channel"),
    _t.c.period == bindparam("k_period"),
    _t.c.unit == bindparam("k_unit"),
)
# Built once: the hot path of every model call in a channel with a budget.
_RESERVE = (
    update(_t)
    .where(_ROW, _t.c.spent + _t.c.reserved + bindparam("amount") <= bindparam("limit"))
    .values(reserved=_t.c.reserved + bindparam("amount"))
)
_RESERVE_UNLIMITED = update(_t).where(_ROW).values(reserved=_t.c.reserved + bindparam("amount"))
_SETTLE = (
    update(_t)
    .where(_ROW)
    .values(reserved=_t.c.reserved - bindparam("held"), spent=_t.c.spent + bindparam("used"))
)
_WARN = (
    update(_t)
    .where(_ROW, _t.c.warned.is_(False), _t.c.spent * 5 >= bindparam("limit") * 4)
    .values(warned=true())
)
_SUMS = select(_t.c.spent, _t.c.reserved).where(_ROW)
_EARLIER = (
    select(
        entries_table.c.model,
        func.coalesce(func.sum(entries_table.c.prompt_tokens), 0),
        func.coalesce(func.sum(entries_table.c.cached_tokens), 0),
        func.coalesce(func.sum(entries_table.c.completion_tokens), 0),
    )
    .select_from(entries_table.join(threads_table))
    .where(
        threads_table.c.team == bindparam("team"),
        threads_table.c.channel == bindparam("channel"),
        entries_table.c.latency_ms.isnot(None),
        entries_table.c.recorded_at >= bindparam("since"),
    )
    .group_by(entries_table.c.model)
)


_KEY = ["team", "channel", "period", "unit"]
_OPEN_POSTGRESQL = postgresql.insert(_t).on_conflict_do_nothing(index_elements=_KEY)
_OPEN_SQLITE = sqlite.insert(_t).on_conflict_do_nothing(index_elements=_KEY)


class _Refused(Exception):
    def __init__(self, reached: BudgetReached) -> None:
        self.reached = reached


class SqlSpend(Repository):
    """`SpendStore` over SQL."""

    def reserve(
        self,
        team: str,
        channel: str,
        unit: Unit,
        amount: int,
        limits: Sequence[tuple[Period, int | None]],
        prior: PriorCost,
    ) -> Hold | BudgetReached:
        try:
            with self._db.transaction() as connection:
                self._reserve(connection, team, channel, unit, amount, limits, prior)
        except _Refused as refused:  # raised inside: nothing held in any period
            return refused.reached
        return Hold(team, channel, unit, tuple(p.name for p, _ in limits), amount)

    def _reserve(
        self,
        connection: Connection,
        team: str,
        channel: str,
        unit: Unit,
        amount: int,
        limits: Sequence[tuple[Period, int | None]],
        prior: PriorCost,
    ) -> None:
        for period, limit in limits:
            row = {"team": team, "channel": channel, "period": period.name, "unit": unit}
            params = {f"k_{k}": v for k, v in row.items()} | {"amount": amount, "limit": limit}
            statement = _RESERVE_UNLIMITED if limit is None else _RESERVE
            if connection.execute(statement, params).rowcount == 1:
                continue
            sums = connection.execute(_SUMS, params).first()
            if sums is None:  # the period's first call with a budget: its row opened
                spent = self._opened(connection, team, channel, period, prior)
                connection.execute(
                    _OPEN_POSTGRESQL if connection.dialect.name == "postgresql" else _OPEN_SQLITE,
                    {**row, "spent": spent, "reserved": 0},
                )
                if connection.execute(statement, params).rowcount == 1:
                    continue
                sums = connection.execute(_SUMS, params).first()
            assert sums is not None and limit is not None
            raise _Refused(BudgetReached(unit, period, limit, sums.spent + sums.reserved))

    def _opened(
        self, connection: Connection, team: str, channel: str, period: Period, prior: PriorCost
    ) -> int:
        params = {"team": team, "channel": channel, "since": moment(period.start)}
        return sum(
            prior(model, int(prompt), int(cached), int(completion))
            for model, prompt, cached, completion in connection.execute(_EARLIER, params)
        )

    def settle(
        self, hold: Hold, used: int, limits: Sequence[tuple[Period, int | None]] = ()
    ) -> list[Warning80]:
        warnings = []
        with self._db.transaction() as connection:
            row = {"k_team": hold.team, "k_channel": hold.channel, "k_unit": hold.unit}
            for name in hold.periods:
                params = {**row, "k_period": name, "held": hold.amount, "used": used}
                connection.execute(_SETTLE, params)
            for period, limit in limits:
                if limit is None or period.name not in hold.periods:
                    continue
                params = {**row, "k_period": period.name, "limit": limit}
                if connection.execute(_WARN, params).rowcount == 1:
                    sums = connection.execute(_SUMS, params).one()
                    warnings.append(Warning80(hold.unit, period, limit, sums.spent))
        return warnings

    def spend(
        self, team: str | None, periods: Sequence[str]
    ) -> list[tuple[str, str, str, str, int, int]]:
        query = (
            select(_t.c.team, _t.c.channel, _t.c.period, _t.c.unit, _t.c.spent, _t.c.reserved)
            .where(_t.c.period.in_(list(periods)))
            .order_by(_t.c.team, _t.c.channel, _t.c.period, _t.c.unit)
        )
        if team is not None:
            query = query.where(_t.c.team == team)
        with self._db.read() as connection:
            return [tuple(row) for row in connection.execute(query)]
