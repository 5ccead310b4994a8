"""Replay (docs/architecture.md#replay): a saved log sent to the configured model, to see what it
does next.

The same agent loop as in Slack, on a scratch store, with tools that touch no Slack:
postMessage is recorded but not sent, and the thread history is what the log holds.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TextIO

from assistant.agent import Agent, RunContext, ToolFunction
from assistant.model import ModelClient
from assistant.recorder import Recorder
from assistant.runs import AnswerRequest
from assistant.settings import Settings
from assistant.tools.expand_entry import expand_entry
from assistant.tools.finish_request import finish_request
from assistant.tools.get_thread_history import HistoryLine, format_history
from context.entry import AssistantEntry, Entry, UserEntry
from context.log import ContextLog
from context.render import TraceWriter
from context.storage import ThreadKey, open_store
from context.toolcalls import GetThreadHistory, PostMessage

REPLAY_THREAD = ThreadKey("replay", "replay", "0")


async def _not_sent(call: PostMessage, ctx: RunContext, index: int) -> str | None:
    return None


async def _history_from_log(
    call: GetThreadHistory, ctx: RunContext, index: int
) -> str | None:
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
    "getThreadHistory": _history_from_log,
    "expandEntry": expand_entry,
    "finishRequest": finish_request,
}


async def replay(settings: Settings, log: ContextLog, trace: TextIO = sys.stdout) -> list[Entry]:
    """Run the model on the log; print and return the whole extended log."""
    with tempfile.TemporaryDirectory(prefix="assistant-replay-") as scratch:
        store = open_store(f"sqlite:///{Path(scratch) / 'replay.db'}")
        model = ModelClient(settings)
        try:
            for entry in log.entries:  # the same rules place them at the same index and turn
                store.append(REPLAY_THREAD, entry.content, entry.timestamp)
            agent = Agent(
                Recorder(store, TraceWriter(trace)),
                model,
                client=None,
                history=None,
                max_steps=settings.assistant_max_steps,
                budget=settings.prompt_budget(),
                tools=REPLAY_TOOLS,
            )
            last = log.entries[-1].index if log.entries else 0
            await agent.run(REPLAY_THREAD, [AnswerRequest(index=last, message_ts="")])
            return store.entries(REPLAY_THREAD)
        finally:
            await model.close()
            store.close()
