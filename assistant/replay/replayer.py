"""Replay (docs/architecture.md#replay): a saved log sent to the configured model, to see what it
does next.

The same agent loop as in Slack, on a scratch store, with tools that touch no Slack:
postMessage is recorded but not sent, and the thread history is the stored thread's messages
as they stood at the cut, when the replay is given them, else what the log holds.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

from assistant.model.client import ModelClient
from assistant.run.agent import Agent
from assistant.run.recorder import Recorder
from assistant.run.scheduler import AnswerRequest
from assistant.run.tools.expand_entry import expand_entry
from assistant.run.tools.finish_request import finish_request
from assistant.run.tools.get_thread_history import HistoryLine, format_history
from assistant.run.tools.run_context import RunContext, ToolFunction
from assistant.settings import Settings
from assistant.slack.history import slack_time
from context.entry import FAILURE_PREFIX, AssistantEntry, Entry, SystemEntry, UserEntry
from context.log import ContextLog
from context.storage import EntryMeta, Store, ThreadKey, ThreadMessage, open_store
from context.toolcalls import GetThreadHistory, PostMessage
from context.trace import Trace

REPLAY_THREAD = ThreadKey("replay", "replay", "0")


async def _not_sent(call: PostMessage, ctx: RunContext, index: int) -> str | None:
    return None


async def _history(call: GetThreadHistory, ctx: RunContext, index: int) -> str | None:
    messages, complete = ctx.store.thread_messages(ctx.key)
    if complete:
        lines = [HistoryLine(slack_time(m.ts), m.user, m.text) for m in messages]
        return format_history(lines, call)
    lines = []
    for entry in ctx.log.entries:
        # As in Slack: a message the last prompt showed whole is named by its entry's index.
        shown = entry.index if ctx.shown.in_full(entry.index) else None
        if isinstance(entry, UserEntry):
            author = entry.content.userid
        elif isinstance(entry, AssistantEntry) and isinstance(entry.content, PostMessage):
            author = ctx.bot_mention
        else:
            continue
        lines.append(HistoryLine(entry.timestamp, author, entry.content.text, shown))
    return format_history(lines, call)


REPLAY_TOOLS: dict[str, ToolFunction] = {
    "postMessage": _not_sent,
    "getThreadHistory": _history,
    "expandEntry": expand_entry,
    "finishRequest": finish_request,
}


@dataclass(frozen=True)
class Replayed:
    """One replay: the whole extended log, and the side metadata of the entries it added."""

    entries: list[Entry]
    start: int  # the index of the first entry the replay added
    metadata: list[EntryMeta]

    @property
    def new(self) -> list[Entry]:
        return self.entries[self.start :]

    @property
    def failed(self) -> bool:
        """Whether the run ended on a failure (the model could not be asked)."""
        last = self.entries[-1] if len(self.entries) > self.start else None
        return isinstance(last, SystemEntry) and last.content.startswith(FAILURE_PREFIX)


class Replayer:
    """Replays logs one after another on one scratch store and one model client:
    `async with Replayer(settings, trace) as replayer: await replayer.replay(log)`."""

    def __init__(self, settings: Settings, trace: Trace) -> None:
        self._settings = settings
        self._trace = trace
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._store: Store | None = None
        self._model: ModelClient | None = None

    async def __aenter__(self) -> Self:
        self._scratch = tempfile.TemporaryDirectory(prefix="assistant-replay-")
        self._store = open_store(f"sqlite:///{Path(self._scratch.name) / 'replay.db'}")
        self._model = ModelClient(self._settings.model_options())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._model is not None:
            await self._model.close()
        if self._store is not None:
            self._store.close()
        if self._scratch is not None:
            self._scratch.cleanup()

    async def replay(
        self,
        log: ContextLog,
        key: ThreadKey = REPLAY_THREAD,
        thread: Sequence[ThreadMessage] | None = None,
    ) -> Replayed:
        """Run the model on the log (in the scratch thread `key`, which must be new); print
        the entries it adds and return them. `thread`: the Slack thread's messages as they
        were at the end of the log, for getThreadHistory (None: the log's messages)."""
        assert self._store is not None and self._model is not None, "use `async with`"
        store = self._store
        for entry in log.entries:  # the same rules place them at the same index and turn
            store.append(key, entry.content, entry.timestamp)
        if thread is not None:
            store.remember_messages(key, list(thread), complete=True)
        agent = Agent(
            Recorder(store, self._trace),
            self._model,
            client=None,
            history=None,
            max_steps=self._settings.assistant_max_steps,
            budget=self._settings.prompt_budget(),
            tools=REPLAY_TOOLS,
        )
        last = log.entries[-1].index if log.entries else 0
        await agent.run(key, [AnswerRequest(index=last, message_ts="")])
        start = len(log)
        return Replayed(store.entries(key), start, store.metadata(key, start))
