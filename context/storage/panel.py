"""Slack's assistant panel and feedback over SQL (`PanelStore`): which threads were opened in
the panel, what the person views, the title, and each person's latest vote on each answer.

Each of these facts is recorded in the log too (a system entry), in the same transaction as
its side row, so the log and the side metadata never disagree.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Row, select

from context.entry import Entry, entry_from_json
from context.storage.engine import Repository
from context.storage.log import append_locked
from context.storage.tables import (
    THREAD,
    entries_table,
    feedback_votes_table,
    is_thread,
    moment,
    now,
    panel_threads_table,
    prompts_shown_table,
    session_titles_table,
    thread_values,
    threads_table,
    viewing_table,
)
from context.storage.thread_rows import lock_thread
from context.storage.values import EntryMeta, Opening, PanelThread, ThreadKey, Viewing, Vote
from context.toolcalls import PostMessage

# Read at the start of every run: built once (see `THREAD`).
_PANEL = select(panel_threads_table).join(threads_table).where(THREAD)
_SESSION_TITLE = select(session_titles_table.c.title).join(threads_table).where(THREAD)


class SqlPanel(Repository):
    """`PanelStore` over SQL."""

    def record_panel(
        self,
        key: ThreadKey,
        panel: PanelThread,
        content: str,
        timestamp: str,
        meta: EntryMeta,
        opening: Opening,
    ) -> list[Entry]:
        context = json.dumps(panel.context, sort_keys=True)
        with self._db.transaction() as connection:
            thread = lock_thread(connection, key)
            recorded = append_locked(connection, thread, content, timestamp, meta, opening)
            if not recorded:
                return []
            kept = _panel_row(connection, thread.id)
            if kept is None:
                connection.execute(
                    panel_threads_table.insert().values(
                        thread_id=thread.id, user=panel.user, context_json=context
                    )
                )
            else:
                connection.execute(
                    panel_threads_table.update()
                    .where(panel_threads_table.c.thread_id == thread.id)
                    .values(user=panel.user, context_json=context)
                )
        return recorded

    def panel(self, key: ThreadKey) -> PanelThread | None:
        with self._db.read() as connection:
            row = connection.execute(_PANEL, thread_values(key)).first()
        if row is None:
            return None
        return PanelThread(row.user, json.loads(row.context_json), row.title)

    def claim_title(self, key: ThreadKey, title: str) -> bool:
        thread_id = select(threads_table.c.id).where(is_thread(key)).scalar_subquery()
        with self._db.transaction() as connection:
            done = connection.execute(
                panel_threads_table.update()
                .where(
                    panel_threads_table.c.thread_id == thread_id,
                    panel_threads_table.c.title.is_(None),
                )
                .values(title=title)
            )
            return done.rowcount == 1

    def record_session_title(
        self, key: ThreadKey, title: str, user: str, content: str, timestamp: str, meta: EntryMeta
    ) -> list[Entry]:
        with self._db.transaction() as connection:
            thread = lock_thread(connection, key)
            recorded = append_locked(connection, thread, content, timestamp, meta)
            if not recorded:
                return []
            row = {"title": title, "user": user, "changed_at": now()}
            done = connection.execute(
                session_titles_table.update()
                .where(session_titles_table.c.thread_id == thread.id)
                .values(**row)
            )
            if done.rowcount == 0:
                connection.execute(session_titles_table.insert().values(thread_id=thread.id, **row))
        return recorded

    def session_title(self, key: ThreadKey) -> str | None:
        with self._db.read() as connection:
            return connection.execute(_SESSION_TITLE, thread_values(key)).scalar()

    def record_vote(
        self, key: ThreadKey, vote: Vote, content: str, timestamp: str, meta: EntryMeta
    ) -> Entry | None:
        with self._db.transaction() as connection:
            # Locked without creating it: a click never starts a thread.
            thread = connection.execute(
                select(threads_table).where(is_thread(key)).with_for_update()
            ).first()
            if thread is None or not _is_answer(connection, thread.id, vote.answer):
                raise ValueError(f"thread {key} has no postMessage entry {vote.answer}")
            same_person = (
                (feedback_votes_table.c.thread_id == thread.id)
                & (feedback_votes_table.c.answer_idx == vote.answer)
                & (feedback_votes_table.c.user == vote.user)
            )
            latest = connection.scalar(select(feedback_votes_table.c.vote).where(same_person))
            if latest == vote.vote:
                return None  # a repeated click: nothing changed
            recorded = append_locked(connection, thread, content, timestamp, meta)
            if not recorded:
                return None  # the same click delivered again
            if latest is None:
                connection.execute(
                    feedback_votes_table.insert().values(
                        thread_id=thread.id, answer_idx=vote.answer, user=vote.user, vote=vote.vote
                    )
                )
            else:
                connection.execute(
                    feedback_votes_table.update().where(same_person).values(vote=vote.vote)
                )
        return recorded[-1]

    def votes(self, key: ThreadKey) -> list[Vote]:
        query = (
            select(
                feedback_votes_table.c.answer_idx,
                feedback_votes_table.c.user,
                feedback_votes_table.c.vote,
            )
            .join(threads_table)
            .where(is_thread(key))
            .order_by(feedback_votes_table.c.answer_idx, feedback_votes_table.c.user)
        )
        with self._db.read() as connection:
            return [Vote(row.answer_idx, row.user, row.vote) for row in connection.execute(query)]

    def claim_prompts(self, team: str, user: str, now: datetime, every: timedelta) -> bool:
        person = (prompts_shown_table.c.team == team) & (prompts_shown_table.c.user == user)
        with self._db.transaction() as connection:
            shown = connection.scalar(select(prompts_shown_table.c.shown_at).where(person))
            if shown is not None and shown > moment(now - every):
                return False
            if shown is None:
                connection.execute(
                    prompts_shown_table.insert().values(team=team, user=user, shown_at=moment(now))
                )
            else:
                connection.execute(
                    prompts_shown_table.update().where(person).values(shown_at=moment(now))
                )
        return True

    def keep_viewing(self, team: str, channel: str, user: str, entities: list[Any]) -> None:
        text = json.dumps(entities, sort_keys=True)
        where = _viewer(team, channel, user)
        with self._db.transaction() as connection:
            row = connection.execute(select(viewing_table).where(where)).first()
            if row is None:
                connection.execute(
                    viewing_table.insert().values(
                        team=team,
                        channel=channel,
                        user=user,
                        entities_json=text,
                        version=1,
                        recorded=0,
                    )
                )
            elif row.entities_json != text:
                connection.execute(
                    viewing_table.update()
                    .where(where)
                    .values(entities_json=text, version=row.version + 1)
                )

    def viewing(self, team: str, channel: str, user: str) -> Viewing | None:
        with self._db.read() as connection:
            row = connection.execute(
                select(viewing_table).where(_viewer(team, channel, user))
            ).first()
        if row is None or row.recorded >= row.version:
            return None
        return Viewing(json.loads(row.entities_json), row.version)

    def record_viewing(
        self, key: ThreadKey, user: str, version: int, content: str, opening: Opening
    ) -> list[Entry]:
        where = _viewer(key.team, key.channel, user)
        with self._db.transaction() as connection:
            thread = lock_thread(connection, key)
            row = connection.execute(select(viewing_table).where(where).with_for_update()).first()
            if row is None or row.version != version or row.recorded >= version:
                return []
            recorded = append_locked(
                connection, thread, content, opening.timestamp, EntryMeta(), opening
            )
            connection.execute(viewing_table.update().where(where).values(recorded=version))
        return recorded


def _panel_row(connection: Connection, thread_id: int) -> Row[*tuple[Any, ...]] | None:
    query = select(panel_threads_table).where(panel_threads_table.c.thread_id == thread_id)
    return connection.execute(query).first()


def _is_answer(connection: Connection, thread_id: int, index: int) -> bool:
    """Whether entry `index` of the thread is a postMessage (an answer people can rate)."""
    text = connection.scalar(
        select(entries_table.c.content_json).where(
            entries_table.c.thread_id == thread_id, entries_table.c.idx == index
        )
    )
    return text is not None and isinstance(entry_from_json(text).content, PostMessage)


def _viewer(team: str, channel: str, user: str) -> Any:
    return (
        (viewing_table.c.team == team)
        & (viewing_table.c.channel == channel)
        & (viewing_table.c.user == user)
    )
