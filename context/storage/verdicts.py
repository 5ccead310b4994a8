"""Live answers' verdicts over SQL (`VerdictStore`): one row per answer, claimed before the
judge is asked (the primary key keeps an answer from being judged twice, by two processes or
after a restart), filled in when it answers."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from context.storage.engine import Repository
from context.storage.tables import (
    THREAD_ID,
    judged_answers_table,
    moment,
    now,
    thread_values,
    threads_table,
)
from context.storage.values import JudgeCall, ThreadKey, VerdictCount, VerdictRow

_judged = judged_answers_table.c


class SqlVerdicts(Repository):
    """`VerdictStore` over SQL."""

    def claim_judging(
        self, key: ThreadKey, answer: int, model: str | None, judge_model: str
    ) -> bool:
        try:
            with self._db.transaction() as connection:
                thread_id = connection.scalar(THREAD_ID, thread_values(key))
                if thread_id is None:
                    return False
                found = connection.scalar(
                    select(_judged.answer_idx).where(
                        _judged.thread_id == thread_id, _judged.answer_idx == answer
                    )
                )
                if found is not None:
                    return False
                connection.execute(
                    judged_answers_table.insert().values(
                        thread_id=thread_id,
                        answer_idx=answer,
                        judged_at=now(),
                        model=model,
                        judge_model=judge_model,
                    )
                )
        except IntegrityError:  # another process claimed it between the read and the insert
            return False
        return True

    def record_verdict(self, key: ThreadKey, answer: int, judged: JudgeCall) -> None:
        latency = None if judged.latency_ms is None else round(judged.latency_ms)
        with self._db.transaction() as connection:
            thread_id = connection.scalar(THREAD_ID, thread_values(key))
            connection.execute(
                judged_answers_table.update()
                .where(_judged.thread_id == thread_id, _judged.answer_idx == answer)
                .values(
                    judged_at=now(),
                    verdict=judged.verdict,
                    reason=judged.reason,
                    latency_ms=latency,
                    prompt_tokens=judged.prompt_tokens,
                    cached_tokens=judged.cached_tokens,
                    completion_tokens=judged.completion_tokens,
                )
            )

    def verdict_counts(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> list[VerdictCount]:
        threads = threads_table.c
        query = (
            select(
                threads.team,
                threads.channel,
                _judged.model,
                _judged.judge_model,
                _judged.verdict,
                func.count().label("answers"),
            )
            .select_from(judged_answers_table.join(threads_table))
            .group_by(
                threads.team, threads.channel, _judged.model, _judged.judge_model, _judged.verdict
            )
        )
        if since is not None:
            query = query.where(_judged.judged_at >= moment(since))
        if until is not None:
            query = query.where(_judged.judged_at < moment(until))
        with self._db.read() as connection:
            rows = connection.execute(query).all()
        return [
            VerdictCount(
                row.team, row.channel, row.model, row.judge_model, row.verdict, row.answers
            )
            for row in rows
        ]

    def recent_verdicts(self, limit: int, since: datetime | None = None) -> list[VerdictRow]:
        threads = threads_table.c
        query = (
            select(
                threads.team,
                threads.channel,
                threads.thread_ts,
                _judged.answer_idx,
                _judged.judged_at,
                _judged.model,
                _judged.judge_model,
                _judged.verdict,
                _judged.reason,
            )
            .select_from(judged_answers_table.join(threads_table))
            .order_by(_judged.judged_at.desc())
            .limit(limit)
        )
        if since is not None:
            query = query.where(_judged.judged_at >= moment(since))
        with self._db.read() as connection:
            rows = connection.execute(query).all()
        return [
            VerdictRow(
                ThreadKey(row.team, row.channel, row.thread_ts),
                row.answer_idx,
                row.judged_at,
                row.model,
                row.judge_model,
                row.verdict,
                row.reason,
            )
            for row in rows
        ]
