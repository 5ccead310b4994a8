"""Who watches the model calls (the telemetry, `assistant/telemetry/`): each call as it was
asked, its first streamed piece, each tool call once complete, then its reply or its failure.
With no one watching (`ModelClient.watcher` None) nothing here is called."""

from __future__ import annotations

from typing import Protocol

from assistant.model.completion import ModelReply


class CallWatch(Protocol):
    """One model call, as it goes."""

    def first_chunk(self) -> None: ...

    def call_ended(self, name: str, call_id: str | None) -> None: ...

    def ended(self, reply: ModelReply) -> None: ...

    def failed(self, error: BaseException) -> None: ...


class CallWatcher(Protocol):
    def call(
        self, model: str, max_tokens: int | None, streamed: bool, prompt_text: str
    ) -> CallWatch:
        """A call begins: the model and answer cap it is asked with, and its prompt."""
        ...
