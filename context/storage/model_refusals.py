"""What the model service refused in each channel over SQL (`ModelRefusalStore`): one row per
channel, the latest refusal there, for `assistant channels list`."""

from __future__ import annotations

from sqlalchemy import delete, insert, select

from context.storage.engine import Repository
from context.storage.tables import model_refusals_table
from context.storage.values import ModelRefusal

_table = model_refusals_table


class SqlModelRefusals(Repository):
    """`ModelRefusalStore` over SQL."""

    def refuse_model(self, refusal: ModelRefusal) -> None:
        where = (_table.c.team == refusal.team) & (_table.c.channel == refusal.channel)
        with self._db.transaction() as connection:
            connection.execute(delete(_table).where(where))
            connection.execute(insert(_table).values(**vars(refusal)))

    def model_served(self, team: str, channel: str, model: str) -> None:
        where = (_table.c.team == team) & (_table.c.channel == channel) & (_table.c.model == model)
        with self._db.transaction() as connection:
            connection.execute(delete(_table).where(where))

    def model_refusals(self, team: str | None = None) -> list[ModelRefusal]:
        query = select(_table).order_by(_table.c.team, _table.c.channel)
        if team is not None:
            query = query.where(_table.c.team == team)
        with self._db.read() as connection:
            return [ModelRefusal(**row._mapping) for row in connection.execute(query)]
