"""Eval runs over SQL (`EvalRunStore`): a run's row, its logs and its results, each read back
a page at a time so that a run of any size is never held whole."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from sqlalchemy import bindparam, select

from context.storage.engine import Repository
from context.storage.tables import (
    eval_run_logs_table,
    eval_run_results_table,
    eval_runs_table,
    now,
)
from context.storage.values import EvalRunRow

PAGE = 500  # rows a read returns: a page of results is at most a few MB

_results = eval_run_results_table.c
# Read once a case by `eval diff` (twice for B): built once, as the hot statements of the log
# are (`tables.THREAD`), so a read costs SQLite's answer, not a statement's compilation.
_ONE_RESULT = select(_results.result).where(
    _results.run_id == bindparam("run"),
    _results.config == bindparam("of_config"),
    _results.number == bindparam("at"),
)


class SqlEvalRuns(Repository):
    """`EvalRunStore` over SQL."""

    def begin_eval_run(self, label: str) -> int:
        with self._db.transaction() as connection:
            found = connection.execute(
                eval_runs_table.insert().values(created_at=now(), label=label)
            ).inserted_primary_key
        assert found is not None
        return int(found[0])

    def add_eval_run_logs(self, run_id: int, documents: Sequence[tuple[int, str]]) -> None:
        if not documents:
            return
        rows = [{"run_id": run_id, "number": n, "document": d} for n, d in documents]
        with self._db.transaction() as connection:
            connection.execute(eval_run_logs_table.insert(), rows)

    def add_eval_run_results(self, run_id: int, rows: Sequence[tuple[int, int, str]]) -> None:
        if not rows:
            return
        values = [
            {"run_id": run_id, "config": config, "number": number, "result": line}
            for config, number, line in rows
        ]
        with self._db.transaction() as connection:
            connection.execute(eval_run_results_table.insert(), values)

    def finish_eval_run(self, run_id: int, manifest: str) -> None:
        with self._db.transaction() as connection:
            connection.execute(
                eval_runs_table.update()
                .where(eval_runs_table.c.id == run_id)
                .values(manifest=manifest)
            )

    def eval_runs(self) -> list[EvalRunRow]:
        with self._db.read() as connection:
            rows = connection.execute(
                select(eval_runs_table).order_by(eval_runs_table.c.id.desc())
            ).all()
        return [EvalRunRow(row.id, row.created_at, row.label, row.manifest) for row in rows]

    def eval_run(self, run_id: int) -> EvalRunRow | None:
        with self._db.read() as connection:
            row = connection.execute(
                select(eval_runs_table).where(eval_runs_table.c.id == run_id)
            ).first()
        return None if row is None else EvalRunRow(row.id, row.created_at, row.label, row.manifest)

    def eval_run_logs(self, run_id: int) -> Iterator[str]:
        logs = eval_run_logs_table.c
        after = 0
        while True:
            with self._db.read() as connection:
                page = connection.execute(
                    select(logs.number, logs.document)
                    .where(logs.run_id == run_id, logs.number > after)
                    .order_by(logs.number)
                    .limit(PAGE)
                ).all()
            for row in page:
                yield row.document
            if len(page) < PAGE:
                return
            after = page[-1].number

    def eval_run_results(self, run_id: int, config: int) -> Iterator[tuple[int, str]]:
        results = eval_run_results_table.c
        after = 0
        while True:
            with self._db.read() as connection:
                page = connection.execute(
                    select(results.number, results.result)
                    .where(
                        results.run_id == run_id,
                        results.config == config,
                        results.number > after,
                    )
                    .order_by(results.number)
                    .limit(PAGE)
                ).all()
            for row in page:
                yield row.number, row.result
            if len(page) < PAGE:
                return
            after = page[-1].number

    def eval_run_result(self, run_id: int, config: int, number: int) -> str | None:
        with self._db.read() as connection:
            found: str | None = connection.scalar(
                _ONE_RESULT, {"run": run_id, "of_config": config, "at": number}
            )
        return found

    def delete_eval_run(self, run_id: int) -> bool:
        with self._db.transaction() as connection:
            for table in (eval_run_results_table, eval_run_logs_table):
                connection.execute(table.delete().where(table.c.run_id == run_id))
            deleted = connection.execute(
                eval_runs_table.delete().where(eval_runs_table.c.id == run_id)
            ).rowcount
        return bool(deleted)
