"""Spend limits over SQL (`SpendStore`, docs/operations.md#spend-limits): a period's spent
and held sums, reserved and settled with atomic conditional UPDATEs, so that processes
sharing the database never pass a budget by more than their calls' usage exceeded their own
worst case.

A period's row is made when a budget first needs it, its `spent` opened with what the
channel's calls recorded in the period so far (a budget set at noon counts the morning)."""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence

from sqlalchemy import Connection, Engine, and_, bindparam, func, select, true, update
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
# A period with no limit is counted all the same (the other may get one), under this one.
NO_LIMIT = 2**62
# The hot path of every model call in a channel with a budget: both periods (the day's and
# the month's rows) in one UPDATE, each against its own limit; held in both, or (fewer rows
# changed) the transaction is rolled back.
# The two statements of every call, as the driver's SQL: SQLAlchemy's compiled-statement
# path costs more CPU than the database's own work on them, and the budget check is held to
# 0.5 ms a call (bench/budgets.py). Each in the two parameter styles of our drivers (sqlite3:
# named `:x`; psycopg: `%(x)s`).
_RESERVE_SQL = (
    "UPDATE spend SET reserved = reserved + {amount} "
    "WHERE team = {k_team} AND channel = {k_channel} AND unit = {k_unit} "
    "AND period IN ({k_p0}, {k_p1}) "
    "AND spent + reserved + {amount} <= CASE WHEN period = {k_p0} THEN {l0} ELSE {l1} END "
    "RETURNING period"
)
_SETTLE_SQL = (
    "UPDATE spend SET reserved = reserved - {held}, spent = spent + {used} "
    "WHERE team = {k_team} AND channel = {k_channel} AND unit = {k_unit} "
    "AND period IN ({k_p0}, {k_p1}) RETURNING period, spent, warned"
)
_NAMES = ("amount", "held", "used", "k_team", "k_channel", "k_unit", "k_p0", "k_p1", "l0", "l1")
_STYLES = {
    "sqlite": {name: f":{name}" for name in _NAMES},
    "postgresql": {name: f"%({name})s" for name in _NAMES},
}
_RESERVE = {dialect: _RESERVE_SQL.format(**style) for dialect, style in _STYLES.items()}
_SETTLE = {dialect: _SETTLE_SQL.format(**style) for dialect, style in _STYLES.items()}
_WARN = update(_t).where(_ROW, _t.c.warned.is_(False)).values(warned=true())
_SUMS = select(_t.c.spent, _t.c.reserved).where(_ROW)
_LOCKED = _SUMS.with_for_update()
_UNDO = update(_t).where(_ROW).values(reserved=_t.c.reserved - bindparam("amount"))
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


_AUTOCOMMIT: weakref.WeakKeyDictionary[Engine, Engine] = weakref.WeakKeyDictionary()


def _autocommit(engine: Engine) -> Engine:
    """The engine's autocommit face (same pool), made once: making one costs CPU."""
    found = _AUTOCOMMIT.get(engine)
    if found is None:
        found = _AUTOCOMMIT[engine] = engine.execution_options(isolation_level="AUTOCOMMIT")
    return found


class _Refused(Exception):
    def __init__(self, reached: BudgetReached) -> None:
        self.reached = reached


class SqlSpend(Repository):
    """`SpendStore` over SQL."""

    def _one_statement(self, sql: Mapping[str, str], params: dict[str, object]) -> int:
        """A statement that is atomic alone, in autocommit (PostgreSQL: the store's writes
        take no queue there); the rows it changed, each undone if it changed only some (the
        caller then takes the transaction's path)."""
        with _autocommit(self._db.engine).connect() as connection:
            held = connection.exec_driver_sql(sql[connection.dialect.name], params).scalars().all()
            if 0 < len(held) < 2 and params["k_p0"] != params["k_p1"]:
                for name in held:  # held in one period, not the other
                    key = {k: params[k] for k in ("k_team", "k_channel", "k_unit")}
                    connection.execute(_UNDO, {**key, "k_period": name, "amount": params["amount"]})
            return len(held)

    def reserve(
        self,
        team: str,
        channel: str,
        unit: Unit,
        amount: int,
        limits: Sequence[tuple[Period, int | None]],
        prior: PriorCost,
    ) -> Hold | BudgetReached:
        params = _both(team, channel, unit, limits) | {"amount": amount}
        postgres = self._db.engine.dialect.name == "postgresql"
        if postgres and self._one_statement(_RESERVE, params) == len(limits):
            # PostgreSQL: the one UPDATE is atomic and its rows' conditions are checked as
            # each is locked; outside a transaction it is one round trip, not three.
            return Hold(team, channel, unit, tuple(p.name for p, _ in limits), amount)
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
        params = _both(team, channel, unit, limits) | {"amount": amount}
        reserve = _RESERVE[connection.dialect.name]
        held = connection.exec_driver_sql(reserve, params).scalars().all()
        if len(held) == len(limits):
            return
        for name in held:  # held in one period, not the other: undone before the checks
            key = {"k_team": team, "k_channel": channel, "k_period": name, "k_unit": unit}
            connection.execute(_UNDO, {**key, "amount": amount})
        # Refused, or a period's first call with a budget: its row opened; then both rows
        # locked (PostgreSQL; SQLite's write transaction holds the database) and each period
        # checked here, before anything of this call is held.
        # Rows opened and locked in the primary key's order, the order an UPDATE of both
        # takes their locks in (PostgreSQL): two writers locking them in opposite orders
        # deadlock (`test_two_writers_racing_on_postgresql_never_pass_the_budget`).
        in_key_order = sorted(limits, key=lambda bound: bound[0].name)
        for period, _ in in_key_order:
            row = {"team": team, "channel": channel, "period": period.name, "unit": unit}
            key = {f"k_{k}": v for k, v in row.items()}
            if connection.execute(_SUMS, key).first() is None:
                spent = self._opened(connection, team, channel, period, prior)
                postgres = connection.dialect.name == "postgresql"
                opening = _OPEN_POSTGRESQL if postgres else _OPEN_SQLITE
                connection.execute(opening, {**row, "spent": spent, "reserved": 0})
        locked = {}
        for period, _ in in_key_order:
            key = {"k_team": team, "k_channel": channel, "k_period": period.name, "k_unit": unit}
            locked[period.name] = connection.execute(_LOCKED, key).one()
        for period, limit in limits:  # the day's refusal named before the month's
            sums = locked[period.name]
            if limit is not None and sums.spent + sums.reserved + amount > limit:
                raise _Refused(BudgetReached(unit, period, limit, sums.spent + sums.reserved))
        changed = len(connection.exec_driver_sql(reserve, params).scalars().all())
        if changed != len(limits):  # the rows are locked: cannot happen
            raise AssertionError(f"{changed} of {len(limits)} periods held, none over its limit")

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
        # PostgreSQL: the one UPDATE alone, in autocommit (one round trip, not three); SQLite:
        # in the store's write queue, one writer at a time. The hot path does neither: the
        # usage is counted in the write that records it (`settle_in`, `Settlement`).
        postgres = self._db.engine.dialect.name == "postgresql"
        begun = _autocommit(self._db.engine).connect() if postgres else self._db.transaction()
        with begun as connection:
            return settle_in(connection, hold, used, limits)

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


def _both(
    team: str, channel: str, unit: Unit, limits: Sequence[tuple[Period, int | None]]
) -> dict[str, object]:
    """`_RESERVE`'s and `_SETTLE`'s values: one period or two (the day's, the month's)."""
    if not 1 <= len(limits) <= 2:
        raise ValueError(f"one or two periods, not {len(limits)}")
    (p0, l0), (p1, l1) = limits[0], limits[-1]
    return {
        "k_team": team,
        "k_channel": channel,
        "k_unit": unit,
        "k_p0": p0.name,
        "k_p1": p1.name,
        "l0": NO_LIMIT if l0 is None else l0,
        "l1": NO_LIMIT if l1 is None else l1,
    }


def settle_in(
    connection: Connection, hold: Hold, used: int, limits: Sequence[tuple[Period, int | None]]
) -> list[Warning80]:
    """`SpendStore.settle` on a connection the caller holds: alone, or inside the write
    that records the call's usage (`SqlLog.append`, `SqlLog.set_usage`), which saves the
    hot path a transaction and a hand-off to the store's threads (bench/budgets.py)."""
    names = hold.periods
    params = {
        "k_team": hold.team,
        "k_channel": hold.channel,
        "k_unit": hold.unit,
        "k_p0": names[0],
        "k_p1": names[-1],
        "held": hold.amount,
        "used": used,
    }
    warnings: list[Warning80] = []
    settle = _SETTLE[connection.dialect.name]
    left = {row.period: row for row in connection.exec_driver_sql(settle, params)}
    for period, limit in limits:
        row = left.get(period.name)
        # SQLite answers its booleans as 0 and 1.
        if limit is None or row is None or bool(row.warned) or row.spent * 5 < limit * 4:
            continue
        key = {k: params[k] for k in ("k_team", "k_channel", "k_unit")}
        if connection.execute(_WARN, {**key, "k_period": period.name}).rowcount == 1:
            warnings.append(Warning80(hold.unit, period, limit, row.spent))
    return warnings
