"""What the model calls cost, grouped in SQL (`Housekeeping.usage`, `assistant usage`), and the
person each entry is by or for, which the log writes with every entry (migration 0009_usage).

A model call's figures sit on the first entry of its reply (`latency_ms` set; `set_usage`);
the entry that ends a run has `ends_run`. Both are counted by the time they were recorded.
A live judge's call (ASSISTANT_JUDGE_SAMPLE) sits on its verdict's row (`judged_answers`),
counted by the time it was judged and marked as the judge's (`judge_usage_query`).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from sqlalchemy import BindParameter, Select, case, func, or_, select
from sqlalchemy.sql import ColumnElement

from context.entry import Content, UserContent
from context.storage.tables import entries_table, judged_answers_table, moment, threads_table

# What `assistant usage --by` may group by; None is one group, the whole window.
USAGE_GROUPS = ("workspace", "channel", "user", "day", "model")

_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
_EARLIER = entries_table.alias("earlier")


def author_of(content: Content) -> str | None:
    """The Slack user id of a user entry's author (`<@U123>` → `U123`); None for the others."""
    if not isinstance(content, UserContent):
        return None
    found = _MENTION.fullmatch(content.userid)
    return found.group(1) if found else content.userid


def person_for(thread_id: BindParameter[int]) -> ColumnElement[str | None]:
    """The `person` of a new entry: its author (`:author`), or else the author of the thread's
    newest user entry, read in the write that records it (the thread's row is locked)."""
    newest = (
        select(_EARLIER.c.person)
        .where(_EARLIER.c.thread_id == thread_id, _EARLIER.c.role == "user")
        .order_by(_EARLIER.c.idx.desc())
        .limit(1)
        .scalar_subquery()
    )
    return func.coalesce(BindParameter("author", type_=entries_table.c.person.type), newest)


def _group_columns(by: str | None) -> list[ColumnElement[str | None]]:
    entries, threads = entries_table.c, threads_table.c
    if by is None:
        return []
    if by == "workspace":
        return [threads.team]
    if by == "channel":
        return [threads.team, threads.channel]
    if by == "user":
        return [entries.person]
    if by == "day":  # the UTC date: `recorded_at` is fixed-width UTC text
        return [func.substr(entries.recorded_at, 1, 10)]
    if by == "model":
        return []  # the model is a column of every row already
    raise ValueError(f"cannot group usage by {by!r}; choose from {', '.join(USAGE_GROUPS)}")


def usage_query(
    by: str | None, since: datetime | None, until: datetime | None
) -> Select[*tuple[Any, ...]]:
    """One row per group and model: the group's values, the model, then calls, input, cached
    and output tokens and answers, for entries recorded in [since, until)."""
    entries = entries_table.c
    groups = [column.label(f"group_{n}") for n, column in enumerate(_group_columns(by))]
    query = select(
        *groups,
        entries.model,
        func.count(entries.latency_ms).label("calls"),
        *(
            func.coalesce(func.sum(entries[name]), 0).label(name)
            for name in ("prompt_tokens", "cached_tokens", "completion_tokens")
        ),
        func.coalesce(func.sum(case((entries.ends_run, 1), else_=0)), 0).label("answers"),
    ).where(or_(entries.latency_ms.isnot(None), entries.ends_run))
    if by in ("workspace", "channel"):
        query = query.select_from(entries_table.join(threads_table))
    if since is not None:
        query = query.where(entries.recorded_at >= moment(since))
    if until is not None:
        query = query.where(entries.recorded_at < moment(until))
    return query.group_by(*groups, entries.model)


def judge_usage_query(
    by: str | None, since: datetime | None, until: datetime | None
) -> Select[*tuple[Any, ...]]:
    """As `usage_query`, for the live judge's calls (no answers): a verdict's row grouped as
    the answer it judged (its thread's workspace and channel, the person it answered)."""
    judged, entries = judged_answers_table.c, entries_table.c
    columns: list[ColumnElement[str | None]]
    if by == "day":
        columns = [func.substr(judged.judged_at, 1, 10)]
    elif by == "user":
        columns = [entries.person]
    else:
        columns = _group_columns(by)
    groups = [column.label(f"group_{n}") for n, column in enumerate(columns)]
    query = select(
        *groups,
        judged.judge_model.label("model"),
        func.count(judged.latency_ms).label("calls"),
        *(
            func.coalesce(func.sum(judged[name]), 0).label(name)
            for name in ("prompt_tokens", "cached_tokens", "completion_tokens")
        ),
        func.count(judged.latency_ms).label("answers"),  # read as the judge's calls
    ).where(judged.latency_ms.isnot(None))
    source = judged_answers_table.join(threads_table)
    if by == "user":
        source = source.join(
            entries_table,
            (entries.thread_id == judged.thread_id) & (entries.idx == judged.answer_idx),
        )
    query = query.select_from(source)
    if since is not None:
        query = query.where(judged.judged_at >= moment(since))
    if until is not None:
        query = query.where(judged.judged_at < moment(until))
    return query.group_by(*groups, judged.judge_model)
