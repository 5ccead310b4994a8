"""Held requests for `FakeSlack`: a method's next call, its next answer, or a file's next
download, waits until the test releases it (a read slower than the app waits)."""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from assistant.fakes._server import Hold


class RequestHolds:
    """Part of `FakeSlack`: its router and file route wait with `_wait_if_held`."""

    _cond: threading.Condition

    def _init_holds(self) -> None:
        # by method, "answer:" + method, or "file:" + file id
        self._holds: dict[str, deque[Hold]] = {}
        self._held: list[Hold] = []

    def hold(self, method: str) -> Hold:
        """The next call to `method` waits until `.release()`, then is answered as it would
        have been (it is recorded in `calls` only then): a read slower than the app waits."""
        return self._add_hold(method)

    def hold_answer(self, method: str) -> Hold:
        """The next call to `method` is carried out (and recorded in `calls`) at once, and
        its answer waits until `.release()`: an answer still on its way back to the app."""
        return self._add_hold(f"answer:{method}")

    def hold_download(self, file: dict[str, Any]) -> Hold:
        """The next download of `file` (as `add_file` returned it) waits until `.release()`."""
        return self._add_hold(f"file:{file['id']}")

    def _add_hold(self, key: str) -> Hold:
        hold = Hold()
        with self._cond:
            self._holds.setdefault(key, deque()).append(hold)
        return hold

    async def _wait_if_held(self, key: str) -> None:
        with self._cond:
            queue = self._holds.get(key)
            hold = queue.popleft() if queue else None
            if hold is not None:
                self._held.append(hold)
        if hold is not None:
            await hold._wait()
