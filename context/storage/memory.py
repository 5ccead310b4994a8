"""Channel memory over SQL (`MemoryStore`): the memories in force (`memories`) and the audit
of every change (`memory_audit`), each change and its audit row in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from sqlalchemy import Connection, Row, bindparam, delete, func, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.sql import ColumnElement

from context.channels import WORKSPACE_DEFAULT
from context.memory import MAX_MEMORIES, Memory, clean_text, memory_entry, scope_of
from context.storage.engine import Repository
from context.storage.tables import memories_table, memory_audit_table, now

_table = memories_table
_audit = memory_audit_table
# Built once: a statement built per call costs more CPU than SQLite's answer to it.
_LAST_CHANGE = select(func.max(_audit.c.id)).where(
    _audit.c.team == bindparam("team"),
    (_audit.c.channel == bindparam("channel")) | (_audit.c.channel == WORKSPACE_DEFAULT),
)


class MemoryRefused(ValueError):
    """A change the store does not make (the channel is full, the memory is not there, the
    text does not fit): its message is one line for a person or the model."""


@dataclass(frozen=True)
class MemoryChange:
    """One row of the audit: who changed which memory how (`via`: the thread, `cli`, `app
    home`, `import`), and its text after the change (before it, for `forgotten`)."""

    at: str
    team: str
    channel: str
    memory_id: int
    action: str
    text: str
    actor: str
    via: str


@dataclass(frozen=True)
class NewMemory:
    """A memory to keep, as `import` reads it: its time and source kept as exported."""

    text: str
    author: str
    created_at: str | None = None
    source: str = "import"


def _memory(row: Row[tuple[object, ...]]) -> Memory:
    m = row._mapping
    return Memory(
        id=m["id"],
        team=m["team"],
        scope=m["scope"],
        channel=m["channel"],
        text=m["text"],
        author=m["author"],
        created_at=m["created_at"],
        source=m["source"],
    )


def _in_force(team: str, channel: str) -> tuple[ColumnElement[bool], ...]:
    channels = (channel,) if channel == WORKSPACE_DEFAULT else (channel, WORKSPACE_DEFAULT)
    return (_table.c.team == team, _table.c.channel.in_(channels))


def memories_in_force(connection: Connection, team: str, channel: str) -> list[Memory]:
    """The channel's memories and its workspace's, oldest first."""
    query = select(_table).where(*_in_force(team, channel)).order_by(_table.c.id)
    return [_memory(row) for row in connection.execute(query)]


# The memory entries made last, by channel: (team, channel, tokens, the last audit row of the
# channel and its workspace) -> the entry. Every change of a memory is an audit row in the same
# transaction, so a newer row means a new entry; until then a new thread reads one number
# instead of every memory (bench/memory.py: 200 memories cost a new thread 5 ms of CPU without).
# Per database (audit ids are one database's): a process's tests open many.
_ENTRIES: WeakKeyDictionary[Engine, dict[tuple[str, str, int, int], str | None]] = (
    WeakKeyDictionary()
)
_ENTRIES_KEPT = 1024


def opening_memory(connection: Connection, team: str, channel: str, tokens: int) -> str | None:
    """The memory entry of a new thread of `channel` (`context.memory.memory_entry`)."""
    last = connection.scalar(_LAST_CHANGE, {"team": team, "channel": channel})
    if last is None:
        return None  # never a memory here
    key = (team, channel, tokens, last)
    made = _ENTRIES.setdefault(connection.engine, {})
    if key in made:
        return made[key]
    text = memory_entry(memories_in_force(connection, team, channel), tokens)
    if len(made) >= _ENTRIES_KEPT:
        made.clear()  # a process with that many channels rebuilds them: still correct
    made[key] = text
    return text


class SqlMemory(Repository):
    """`MemoryStore` over SQL."""

    def memories(self, team: str, channel: str, workspace: bool = False) -> list[Memory]:
        """The channel's own memories (`workspace`: its workspace's too), oldest first."""
        with self._db.read() as connection:
            if workspace:
                return memories_in_force(connection, team, channel)
            query = (
                select(_table)
                .where(_table.c.team == team, _table.c.channel == channel)
                .order_by(_table.c.id)
            )
            return [_memory(row) for row in connection.execute(query)]

    def team_memories(self, team: str, channels: Sequence[str] | None = None) -> list[Memory]:
        """The memories of `channels` of the workspace (None: of every channel), oldest first:
        the App Home lists those a person may see in one query."""
        query = select(_table).where(_table.c.team == team).order_by(_table.c.id)
        if channels is not None:
            query = query.where(_table.c.channel.in_(sorted(set(channels))))
        with self._db.read() as connection:
            return [_memory(row) for row in connection.execute(query)]

    def memory(self, team: str, memory_id: int) -> Memory | None:
        query = select(_table).where(_table.c.team == team, _table.c.id == memory_id)
        with self._db.read() as connection:
            row = connection.execute(query).first()
        return None if row is None else _memory(row)

    def remember(
        self, team: str, channel: str, text: str, author: str, source: str, via: str
    ) -> Memory:
        """Keep one memory of `channel` (`*`: the workspace's), audited; `MemoryRefused`
        when the text does not fit or the channel has `MAX_MEMORIES` already."""
        return self.remember_all(team, channel, [NewMemory(text, author, None, source)], via)[0]

    def remember_all(
        self, team: str, channel: str, items: Sequence[NewMemory], via: str
    ) -> list[Memory]:
        """Keep every one of `items` in one transaction, or (one does not fit) none."""
        checked = [(clean(item.text), item) for item in items]
        at = now()
        with self._db.transaction() as connection:
            count = connection.scalar(
                select(func.count()).where(_table.c.team == team, _table.c.channel == channel)
            )
            if (count or 0) + len(checked) > MAX_MEMORIES:
                raise MemoryRefused(
                    f"the channel would have more than {MAX_MEMORIES} memories; forget some first"
                )
            kept = []
            for text, item in checked:
                values = {
                    "team": team,
                    "scope": scope_of(channel),
                    "channel": channel,
                    "text": text,
                    "author": item.author,
                    "created_at": item.created_at or at,
                    "source": item.source,
                }
                made = connection.execute(insert(_table).values(values).returning(_table.c.id))
                memory = Memory(id=int(made.scalar_one()), **values)  # type: ignore[arg-type]
                _audit_row(connection, memory, "added", text, item.author, via, at)
                kept.append(memory)
        return kept

    def edit_memory(
        self, team: str, channel: str, memory_id: int, text: str, actor: str, via: str
    ) -> Memory:
        """Change a memory's text, audited; `MemoryRefused` when it is not the channel's."""
        text = clean(text)
        at = now()
        with self._db.transaction() as connection:
            found = _locate(connection, team, channel, memory_id)
            connection.execute(update(_table).where(_table.c.id == found.id).values(text=text))
            _audit_row(connection, found, "edited", text, actor, via, at)
        return Memory(**{**found.__dict__, "text": text})

    def forget(self, team: str, channel: str, memory_id: int, actor: str, via: str) -> Memory:
        """Drop a memory of `channel` (`*`: the workspace's), audited with its text; the memory
        dropped, or `MemoryRefused` when it is not there."""
        at = now()
        with self._db.transaction() as connection:
            found = _locate(connection, team, channel, memory_id)
            connection.execute(delete(_table).where(_table.c.id == found.id))
            _audit_row(connection, found, "forgotten", found.text, actor, via, at)
        return found

    def memory_changes(self, team: str, channel: str | None = None) -> list[MemoryChange]:
        """The audit, oldest first (only `channel`'s when given)."""
        query = select(_audit).where(_audit.c.team == team).order_by(_audit.c.id)
        if channel is not None:
            query = query.where(_audit.c.channel == channel)
        with self._db.read() as connection:
            return [
                MemoryChange(
                    at=r.at,
                    team=r.team,
                    channel=r.channel,
                    memory_id=r.memory_id,
                    action=r.action,
                    text=r.text,
                    actor=r.actor,
                    via=r.via,
                )
                for r in connection.execute(query)
            ]


def clean(text: str) -> str:
    try:
        return clean_text(text)
    except ValueError as exc:
        raise MemoryRefused(str(exc)) from None


def _locate(connection: Connection, team: str, channel: str, memory_id: int) -> Memory:
    query = select(_table).where(
        _table.c.team == team, _table.c.channel == channel, _table.c.id == memory_id
    )
    row = connection.execute(query).first()
    if row is None:
        where = "the workspace" if channel == WORKSPACE_DEFAULT else channel
        raise MemoryRefused(f"no memory m{memory_id} in {where}")
    return _memory(row)


def _audit_row(
    connection: Connection, memory: Memory, action: str, text: str, actor: str, via: str, at: str
) -> None:
    connection.execute(
        insert(_audit).values(
            team=memory.team,
            channel=memory.channel,
            memory_id=memory.id,
            action=action,
            text=text,
            actor=actor,
            via=via,
            at=at,
        )
    )
