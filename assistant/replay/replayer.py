"""Replay (docs/architecture.md#replay): a saved log sent to the configured model, to see what it
does next.

The same agent loop as in Slack, on a scratch store, with tools that touch no Slack:
postMessage is recorded but not sent, and the thread history is the stored thread's messages
as they stood at the cut, when the replay is given them, else what the log holds.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from types import TracebackType
from typing import Self

from assistant.model.client import ModelClient
from assistant.run.approvals.entries import BEFORE_RESULT
from assistant.run.core.recorder import Recorder
from assistant.run.core.requests import AnswerRequest
from assistant.run.core.run_context import RunContext, ToolFunction
from assistant.run.loop.agent import Agent
from assistant.run.tools.expand_entry import expand_entry
from assistant.run.tools.finish_request import finish_request
from assistant.run.tools.get_thread_history import HistoryLine, format_history, history_lines
from assistant.run.tools.toolbox import recorded_toolbox
from assistant.settings.environment import Settings
from context.entry import FAILURE_PREFIX, AssistantEntry, Entry, SystemEntry, UserEntry
from context.log import ContextLog
from context.storage import EntryMeta, Store, ThreadKey, ThreadMessage, open_store
from context.toolcalls import (
    HISTORY_DEFAULT_LIMIT,
    GetThreadHistory,
    PostMessage,
    ServerToolCall,
    ToolCall,
)
from context.trace import Trace

REPLAY_THREAD = ThreadKey("replay", "replay", "0")


async def _not_sent(call: PostMessage, ctx: RunContext, index: int) -> str | None:
    return None


def _replay_tools(recorded: Sequence[Entry]) -> dict[str, ToolFunction]:
    """The tools of one replay; `recorded`: the whole recorded log, past the cut too."""

    async def history(call: GetThreadHistory, ctx: RunContext, index: int) -> str | None:
        # Where the run made this same call, it gets what the run got: the thread as Slack
        # gave it then, whatever the store or the log can rebuild now.
        was = recorded_history(recorded, index, call)
        if was is not None:
            return was
        messages, complete = ctx.store.thread_messages(ctx.key)
        if complete:
            metas = ctx.store.metadata(ctx.key)
            return format_history(history_lines(messages, ctx, metas), call)
        lines = []
        for entry in ctx.log.entries:
            # As in Slack: a message the last prompt showed whole is named by its entry's index.
            shown = entry.index if ctx.shown.in_full(entry.index) else None
            if isinstance(entry, UserEntry):
                author, text = entry.content.userid, entry.content.text
            elif isinstance(entry, AssistantEntry) and isinstance(entry.content, PostMessage):
                author, text = ctx.bot_mention, entry.content.text
            else:
                continue
            lines.append(HistoryLine(entry.timestamp, author, text, shown))
        return format_history(lines, call)

    return {
        "postMessage": _not_sent,
        "getThreadHistory": history,
        "expandEntry": expand_entry,
        "finishRequest": finish_request,
        "rememberForChannel": _memory_not_changed,
        "forgetForChannel": _memory_not_changed,
    }


MEMORY_NOT_CHANGED = "Not carried out (replay): a replay changes no channel's memory."


async def _memory_not_changed(call: ToolCall, ctx: RunContext, index: int) -> str | None:
    return MEMORY_NOT_CHANGED


NOT_CALLED = (
    "Not carried out (replay): {name} was not called; a replay calls no MCP server, and this "
    "call is not the one the recorded run made here."
)


def _recorded_server_call(recorded: Sequence[Entry]) -> ToolFunction:
    """A replay's stand-in for the MCP servers' tools: nothing is called (a tool may change
    something); the same call at the same entry as the recorded run gets the result it got."""

    async def stand_in(call: ServerToolCall, ctx: RunContext, index: int) -> str | None:
        was = recorded[index] if index + 1 < len(recorded) else None
        # Its result: the first entry after it that is not of an approval's wait or its start
        # (the log's approvals are shown as recorded; the result says if it was denied or
        # expired).
        after = (
            next(
                (
                    e
                    for e in recorded[index + 1 :]
                    if not (isinstance(e, SystemEntry) and e.content.startswith(BEFORE_RESULT))
                ),
                None,
            )
            if was is not None
            else None
        )
        if (
            was is not None
            and isinstance(was.content, ServerToolCall)
            and was.content.called == call.called
            and was.content.arguments == call.arguments
            and isinstance(after, SystemEntry)
        ):
            return after.content
        return NOT_CALLED.format(name=call.called)

    return stand_in


def recorded_history(recorded: Sequence[Entry], index: int, call: GetThreadHistory) -> str | None:
    """The result the recorded log has for this getThreadHistory call at entry `index`: when
    the log made the same call (same order, same effective limit) there and recorded its
    result right after it; else None."""
    if index + 1 >= len(recorded):
        return None
    was, result = recorded[index], recorded[index + 1]
    if not (isinstance(was, AssistantEntry) and isinstance(was.content, GetThreadHistory)):
        return None
    if not isinstance(result, SystemEntry) or _asked(was.content) != _asked(call):
        return None
    return result.content


def _asked(call: GetThreadHistory) -> tuple[bool, int]:
    return call.ascending, call.limit or HISTORY_DEFAULT_LIMIT


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
        self._store: Store | None = None
        self._model: ModelClient | None = None
        self._owned = contextlib.AsyncExitStack()

    async def __aenter__(self) -> Self:
        owned = self._owned
        scratch = owned.enter_context(tempfile.TemporaryDirectory(prefix="assistant-replay-"))
        self._store = open_store(f"sqlite:///{Path(scratch) / 'replay.db'}")
        owned.callback(self._store.close)
        model = ModelClient(self._settings.model.options())
        self._model = await owned.enter_async_context(model)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._owned.aclose()

    async def replay(
        self,
        log: ContextLog,
        key: ThreadKey = REPLAY_THREAD,
        thread: Sequence[ThreadMessage] | None = None,
        recorded: Sequence[Entry] = (),
        metadata: Sequence[EntryMeta] = (),
    ) -> Replayed:
        """Run the model on the log (in the scratch thread `key`, which must be new); print
        the entries it adds and return them. `thread`: the Slack thread's messages as they
        were at the end of the log, for getThreadHistory (None: the log's messages);
        `recorded`: the whole recorded log, whose getThreadHistory results a replay making
        the same call at the same entry gets; `metadata`: the log's, for its Slack ts."""
        assert self._store is not None and self._model is not None, "use `async with`"
        store = self._store
        for entry, meta in zip_longest(log.entries, metadata[: len(log)]):
            # The same rules place them at the same index and turn; the Slack ts lets a
            # history read name the messages the prompt shows, as in Slack.
            slack_ts = meta.slack_ts if meta is not None else None
            store.append(key, entry.content, entry.timestamp, EntryMeta(slack_ts=slack_ts))
        if thread is not None:
            store.remember_messages(key, list(thread), complete=True)
        agent = Agent(
            Recorder(store, self._trace),
            self._model,
            max_steps=self._settings.answers.max_steps,
            budget=self._settings.model.prompt_budget(),
            tools=_replay_tools(recorded),
            fixed_tools=recorded_toolbox(
                _replay_tools(recorded), recorded, _recorded_server_call(recorded)
            ),
        )
        last = log.entries[-1].index if log.entries else 0
        await agent.run(key, [AnswerRequest(index=last, message_ts="")])
        start = len(log)
        return Replayed(store.entries(key), start, store.metadata(key, start))
