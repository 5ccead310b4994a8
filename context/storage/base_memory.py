"""The store's promises on channel memory (`MemoryStore`), over `context.memory`'s values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from context.memory import Memory

if TYPE_CHECKING:
    from context.storage.memory import MemoryChange, NewMemory


class MemoryStore(Protocol):
    """What channels remember (docs/log-format.md#channel-memory). Every change is one
    transaction with its audit row; a refused one (`MemoryRefused`) changes nothing."""

    def memories(self, team: str, channel: str, workspace: bool = False) -> list[Memory]:
        """The channel's own memories (`workspace`: its workspace's too), oldest first."""
        ...

    def team_memories(self, team: str, channels: Sequence[str] | None = None) -> list[Memory]:
        """The memories of `channels` of the workspace (None: of every channel), oldest first."""
        ...

    def memory(self, team: str, memory_id: int) -> Memory | None:
        """One memory of the workspace by its id, wherever it is."""
        ...

    def remember(
        self, team: str, channel: str, text: str, author: str, source: str, via: str
    ) -> Memory:
        """Keep one memory of `channel` (`*`: the workspace's)."""
        ...

    def remember_all(
        self, team: str, channel: str, items: Sequence[NewMemory], via: str
    ) -> list[Memory]:
        """Keep all of `items`, or none."""
        ...

    def edit_memory(
        self, team: str, channel: str, memory_id: int, text: str, actor: str, via: str
    ) -> Memory:
        """Change the text of a memory of `channel`."""
        ...

    def forget(self, team: str, channel: str, memory_id: int, actor: str, via: str) -> Memory:
        """Drop a memory of `channel`; the memory dropped."""
        ...

    def memory_changes(self, team: str, channel: str | None = None) -> list[MemoryChange]:
        """The audit of every change, oldest first."""
        ...
