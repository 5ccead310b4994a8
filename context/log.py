"""The context log: the index and turn rules (docs/log-format.md#index-and-turn) and the prompt text
(docs/log-format.md#prefix-stability)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from context.entry import Content, Entry, Role, make_entry, role_of


@dataclass(frozen=True, slots=True)
class Tail:
    """Where a log ends: all that is needed to place the next entry.

    This is the one place the index and turn rules live; the in-memory log, the stores and
    the validator all place entries through `place`.
    """

    next_index: int = 0
    turn: int = 0
    last_speaker: Role | None = None

    def place(self, role: Role) -> tuple[int, int, Tail]:
        """The (index, turn) of an entry by `role` appended here, and the tail after it."""
        turn, speaker = self.turn, self.last_speaker
        if role != "system":
            if speaker is not None and speaker != role:
                turn += 1
            speaker = role
        return self.next_index, turn, Tail(self.next_index + 1, turn, speaker)

    @classmethod
    def after(cls, entries: Iterable[Entry]) -> Tail:
        tail = cls()
        for entry in entries:
            tail = tail.place(entry.role)[2]
        return tail


class LogOrderError(ValueError):
    """An entry does not fit where it is being added."""


class ContextLog:
    """An append-only context log with its prompt text built incrementally.

    Each entry's canonical JSON is computed once; the prompt text is those strings joined,
    so the text after an append starts with the previous text minus its closing `]`.
    """

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        self._entries: list[Entry] = []
        self._tail = Tail()
        # "[", entry, ",", entry, …: the closing "]" is added only while joining, so the text
        # is built in one copy (the prompt of a long thread is megabytes).
        self._parts: list[str] = ["["]
        self._text: str | None = None
        for entry in entries:
            self.add(entry)

    @property
    def entries(self) -> Sequence[Entry]:
        return self._entries

    @property
    def tail(self) -> Tail:
        return self._tail

    def __len__(self) -> int:
        return len(self._entries)

    def append(self, content: Content, timestamp: str) -> Entry:
        """Record new content at the end of the log, placed by the turn rules."""
        index, turn, tail = self._tail.place(role_of(content))
        entry = make_entry(index, turn, timestamp, content)
        self._push(entry, tail)
        return entry

    def add(self, entry: Entry) -> None:
        """Add an entry already placed elsewhere (a store); it must be the one expected here."""
        index, turn, tail = self._tail.place(entry.role)
        if (entry.index, entry.turn) != (index, turn):
            raise LogOrderError(
                f"entry {entry.index} (turn {entry.turn}) does not follow entry "
                f"{index - 1}: expected index {index}, turn {turn}"
            )
        self._push(entry, tail)

    def _push(self, entry: Entry, tail: Tail) -> None:
        self._entries.append(entry)
        if len(self._entries) > 1:
            self._parts.append(",")
        self._parts.append(entry.canonical_json())
        self._tail = tail
        self._text = None

    def prompt_text(self) -> str:
        """The whole log as compact JSON, exactly as the model sees it."""
        if self._text is None:
            self._parts.append("]")
            self._text = "".join(self._parts)
            self._parts.pop()
        return self._text
