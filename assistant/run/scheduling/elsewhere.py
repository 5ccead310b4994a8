"""Who runs what an event asks for: this process's `RunScheduler`, or workers elsewhere
(`RunsElsewhere`: the ingress role, `assistant serve --runs off`;
docs/architecture.md#ingress-and-workers)."""

from __future__ import annotations

from typing import Protocol

from assistant.run.core.requests import AnswerRequest
from context.storage import ThreadKey


class RunRequests(Protocol):
    """Where a recorded request for an answer is announced (`RunScheduler` is one)."""

    def request(self, key: ThreadKey, request: AnswerRequest | None = None) -> None: ...


class RunsElsewhere:
    """The ingress role runs nothing: the write that recorded the request has woken the
    workers already (`context/storage/wakeups.py`), and their sweeps find it if that was lost."""

    def request(self, key: ThreadKey, request: AnswerRequest | None = None) -> None:
        return None
