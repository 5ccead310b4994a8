"""A small map whose values expire: for Slack's answers that may go stale (who is in a
conversation), kept briefly so that a busy thread does not ask again for every message."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TtlCache(Generic[K, V]):
    """Each value is kept `seconds` after it was put; at most `size` values, the oldest put
    dropped first. Not thread-safe: one event loop uses it. None cannot be stored (`get`
    answers None for "not known")."""

    def __init__(
        self, seconds: float, size: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if seconds <= 0 or size < 1:
            raise ValueError(f"TtlCache needs seconds > 0 and size >= 1, got {seconds}, {size}")
        self._seconds = seconds
        self._size = size
        self._clock = clock
        self._items: OrderedDict[K, tuple[float, V]] = OrderedDict()

    def get(self, key: K) -> V | None:
        found = self._items.get(key)
        if found is None:
            return None
        expires, value = found
        if self._clock() >= expires:
            del self._items[key]
            return None
        return value

    def put(self, key: K, value: V) -> None:
        self._items.pop(key, None)  # a put again moves to the back, as the newest
        self._items[key] = (self._clock() + self._seconds, value)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)
