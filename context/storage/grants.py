"""Standing approvals of MCP tools over SQL (`GrantStore`, docs/slack-features.md#grants): one
row per grant; revoking one stamps it rather than deleting it, so who gave and who revoked a
grant stays answerable."""

from __future__ import annotations

from sqlalchemy import insert, select, update

from context.storage.engine import Repository
from context.storage.tables import grants_table, now
from context.storage.values import Grant

_table = grants_table
_FIELDS = tuple(c.name for c in _table.columns)


def _grant(row: object) -> Grant:
    mapping = row._mapping  # type: ignore[attr-defined]
    return Grant(**{name: mapping[name] for name in _FIELDS})


class SqlGrants(Repository):
    """`GrantStore` over SQL."""

    def give_grant(
        self,
        team: str,
        channel: str,
        server: str,
        tool: str,
        user: str | None,
        granted_by: str,
        thread_ts: str,
    ) -> Grant:
        values = {
            "team": team,
            "channel": channel,
            "server": server,
            "tool": tool,
            "user": user,
            "granted_by": granted_by,
            "granted_at": now(),
            "thread_ts": thread_ts,
        }
        with self._db.transaction() as connection:
            row = connection.execute(insert(_table).values(**values).returning(*_table.c)).one()
        return _grant(row)

    def grant_covering(
        self, team: str, channel: str, server: str, tool: str, user: str
    ) -> Grant | None:
        query = (
            select(_table)
            .where(
                _table.c.team == team,
                _table.c.channel == channel,
                _table.c.server == server,
                _table.c.tool == tool,
                _table.c.revoked_at.is_(None),
                (_table.c.user == user) | _table.c.user.is_(None),
            )
            # The person's own first (it names them), then the oldest: the same call is
            # always said to be allowed by the same grant.
            .order_by(_table.c.user.is_(None), _table.c.id)
            .limit(1)
        )
        with self._db.read() as connection:
            row = connection.execute(query).first()
        return None if row is None else _grant(row)

    def grants(self, team: str, channel: str | None = None, revoked: bool = False) -> list[Grant]:
        query = select(_table).where(_table.c.team == team).order_by(_table.c.id)
        if channel is not None:
            query = query.where(_table.c.channel == channel)
        if not revoked:
            query = query.where(_table.c.revoked_at.is_(None))
        with self._db.read() as connection:
            return [_grant(row) for row in connection.execute(query)]

    def revoke_grant(self, team: str, grant_id: int, by: str) -> Grant | None:
        statement = (
            update(_table)
            .where(_table.c.team == team, _table.c.id == grant_id, _table.c.revoked_at.is_(None))
            .values(revoked_by=by, revoked_at=now())
            .returning(*_table.c)
        )
        with self._db.transaction() as connection:
            row = connection.execute(statement).first()
        return None if row is None else _grant(row)
