"""Questions of MCP servers to a person over SQL (`ElicitationStore`,
docs/slack-features.md#questions-from-tools): one row per question; its answer is set once,
by whichever process took the form's submission, and read by the run that asked."""

from __future__ import annotations

from sqlalchemy import insert, select, update

from context.storage.engine import Repository
from context.storage.tables import elicitations_table, now
from context.storage.values import Elicitation, ThreadKey

_table = elicitations_table
_FIELDS = tuple(c.name for c in _table.columns)


def _elicitation(row: object) -> Elicitation:
    mapping = row._mapping  # type: ignore[attr-defined]
    return Elicitation(**{name: mapping[name] for name in _FIELDS})


class SqlElicitations(Repository):
    """`ElicitationStore` over SQL."""

    def ask_person(self, key: ThreadKey, asker: str, question_json: str) -> Elicitation:
        values = {
            "team": key.team,
            "channel": key.channel,
            "thread_ts": key.thread_ts,
            "asker": asker,
            "question_json": question_json,
            "asked_at": now(),
        }
        with self._db.transaction() as connection:
            row = connection.execute(insert(_table).values(**values).returning(*_table.c)).one()
        return _elicitation(row)

    def elicitation(self, team: str, elicitation_id: int) -> Elicitation | None:
        query = select(_table).where(_table.c.team == team, _table.c.id == elicitation_id)
        with self._db.read() as connection:
            row = connection.execute(query).first()
        return None if row is None else _elicitation(row)

    def answer_elicitation(
        self, team: str, elicitation_id: int, action: str, content_json: str | None, by: str
    ) -> Elicitation | None:
        statement = (
            update(_table)
            .where(_table.c.team == team, _table.c.id == elicitation_id, _table.c.action.is_(None))
            .values(action=action, content_json=content_json, answered_by=by, answered_at=now())
            .returning(*_table.c)
        )
        with self._db.transaction() as connection:
            row = connection.execute(statement).first()
        return None if row is None else _elicitation(row)
