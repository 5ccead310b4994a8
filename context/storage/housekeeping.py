"""Housekeeping over SQL (`Housekeeping`): what the `threads` commands read and delete (thread
listings with token totals and vote counts, entries' side metadata, purges)."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime

from sqlalchemy import bindparam, case, func, select

from context.storage.engine import Repository
from context.storage.tables import (
    THREAD,
    entries_table,
    entry_images_table,
    feedback_votes_table,
    is_thread,
    judged_answers_table,
    moment,
    panel_threads_table,
    thread_messages_table,
    thread_values,
    threads_table,
)
from context.storage.usage import judge_usage_query, usage_query
from context.storage.values import EntryMeta, ThreadKey, ThreadSummary, UsageRow

_META_COLUMNS = [entries_table.c[field.name] for field in fields(EntryMeta)]
_TOKEN_COLUMNS = ("prompt_tokens", "cached_tokens", "completion_tokens")
_VOTE_COLUMNS = {"good_votes": "good", "bad_votes": "bad"}
# Every table with rows of a thread, children first.
_THREAD_TABLES = (
    entries_table,
    thread_messages_table,
    entry_images_table,
    panel_threads_table,
    feedback_votes_table,
    judged_answers_table,
)


# Read at every step of a run: built once (see `THREAD`).
_METADATA = (
    select(*_META_COLUMNS)
    .join(threads_table)
    .where(THREAD, entries_table.c.idx >= bindparam("start"))
    .order_by(entries_table.c.idx)
)


class SqlHousekeeping(Repository):
    """`Housekeeping` over SQL."""

    def threads(
        self, channel: str | None = None, updated_since: datetime | None = None
    ) -> list[ThreadSummary]:
        totals = (
            select(
                entries_table.c.thread_id,
                *(func.sum(entries_table.c[name]).label(name) for name in _TOKEN_COLUMNS),
            )
            .group_by(entries_table.c.thread_id)
            .subquery()
        )
        votes = (
            select(
                feedback_votes_table.c.thread_id,
                *(
                    func.sum(case((feedback_votes_table.c.vote == vote, 1), else_=0)).label(name)
                    for name, vote in _VOTE_COLUMNS.items()
                ),
            )
            .group_by(feedback_votes_table.c.thread_id)
            .subquery()
        )
        query = (
            select(
                threads_table,
                *(func.coalesce(totals.c[name], 0).label(name) for name in _TOKEN_COLUMNS),
                *(func.coalesce(votes.c[name], 0).label(name) for name in _VOTE_COLUMNS),
            )
            .outerjoin(totals, totals.c.thread_id == threads_table.c.id)
            .outerjoin(votes, votes.c.thread_id == threads_table.c.id)
            .order_by(threads_table.c.updated_at.desc(), threads_table.c.id.desc())
        )
        if channel is not None:
            query = query.where(threads_table.c.channel == channel)
        if updated_since is not None:
            query = query.where(threads_table.c.updated_at >= moment(updated_since))
        with self._db.read() as connection:
            return [
                ThreadSummary(
                    key=ThreadKey(row.team, row.channel, row.thread_ts),
                    entries=row.next_index,
                    created_at=_whole_seconds(row.created_at),
                    updated_at=_whole_seconds(row.updated_at),
                    prompt_tokens=row.prompt_tokens,
                    cached_tokens=row.cached_tokens,
                    completion_tokens=row.completion_tokens,
                    good_votes=row.good_votes,
                    bad_votes=row.bad_votes,
                )
                for row in connection.execute(query)
            ]

    def purge(self, updated_before: datetime, dry_run: bool = False) -> list[ThreadKey]:
        cutoff = moment(updated_before)
        with self._db.transaction() as connection:
            # Locked, so that no append slips into a thread while it is being deleted.
            rows = connection.execute(
                select(
                    threads_table.c.id,
                    threads_table.c.team,
                    threads_table.c.channel,
                    threads_table.c.thread_ts,
                )
                .where(threads_table.c.updated_at < cutoff)
                .order_by(threads_table.c.updated_at)
                .with_for_update()
            ).all()
            ids = [row.id for row in rows]
            if ids and not dry_run:
                for table in _THREAD_TABLES:
                    connection.execute(table.delete().where(table.c.thread_id.in_(ids)))
                connection.execute(threads_table.delete().where(threads_table.c.id.in_(ids)))
        return [ThreadKey(row.team, row.channel, row.thread_ts) for row in rows]

    def started_at(self, key: ThreadKey) -> str | None:
        with self._db.read() as connection:
            return connection.scalar(select(threads_table.c.created_at).where(is_thread(key)))

    def metadata(self, key: ThreadKey, start: int = 0) -> list[EntryMeta]:
        values = {**thread_values(key), "start": start}
        with self._db.read() as connection:
            return [EntryMeta(**row._mapping) for row in connection.execute(_METADATA, values)]

    def usage(
        self, by: str | None = None, since: datetime | None = None, until: datetime | None = None
    ) -> list[UsageRow]:
        found = []
        for judge, query in (
            (False, usage_query(by, since, until)),
            (True, judge_usage_query(by, since, until)),
        ):
            with self._db.read() as connection:
                rows = connection.execute(query).all()
            width = len(query.selected_columns) - 6  # the group's columns come first
            found += [
                UsageRow(
                    group=tuple(row[:width]) if by != "model" else (row.model,),
                    model=row.model,
                    calls=row.calls,
                    input_tokens=int(row.prompt_tokens),
                    cached_tokens=int(row.cached_tokens),
                    output_tokens=int(row.completion_tokens),
                    answers=0 if judge else int(row.answers),
                    judge_calls=row.calls if judge else 0,
                )
                for row in rows
            ]
        return found


def _whole_seconds(stamp: str) -> str:
    """The log's timestamp form (2025-04-04T12:33:00Z) of a `tables.now` value."""
    return stamp[:19] + "Z"
