"""getThreadHistory: the thread's messages, newest first unless asked otherwise
(docs/log-format.md#tool-calls-and-their-results).

A message the prompt already shows whole as an entry (a person's user entry, or a reply of the
bot's postMessage, with the same text) is not written again: the result names that entry by
index. A message with no text (the task cards of a run, in a message of their own) is left
out. Messages from before the bot was there, edited ones, and those whose entries the
prompt left out or cut are written in full.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from slack_sdk.errors import SlackApiError

from assistant.slack.connection import slack_error
from assistant.slack.history import slack_time
from context.entry import AssistantEntry, Entry, UserEntry
from context.storage import EntryMeta, ThreadMessage
from context.storage.async_store import async_store
from context.toolcalls import HISTORY_DEFAULT_LIMIT, GetThreadHistory, PostMessage

if TYPE_CHECKING:
    from assistant.run.core.prompt import ShownPrompt
    from assistant.run.core.run_context import RunContext


class HistoryLine(NamedTuple):
    timestamp: str
    author: str
    text: str
    entry: int | None = None  # the entry the prompt shows this message in, whole


async def get_thread_history(call: GetThreadHistory, ctx: RunContext, index: int) -> str | None:
    assert ctx.history is not None, "getThreadHistory needs Slack"
    try:
        messages = await ctx.history.messages(ctx.key)
    except SlackApiError as exc:
        # A failed read is news for the model, not the end of the run: it can still answer.
        return f"Error: Slack did not give the thread history ({slack_error(exc)})."
    metas = await async_store(ctx.store).read(ctx.store.metadata, ctx.key)
    return format_history(history_lines(messages, ctx, metas), call)


def history_lines(
    messages: Sequence[ThreadMessage], ctx: RunContext, metas: Sequence[EntryMeta]
) -> list[HistoryLine]:
    """The thread's messages as history lines, each the prompt shows whole named by its entry
    (`metas`: the log's side metadata, for the entries' Slack ts)."""
    entries = ctx.log.entries  # as the model was last shown them
    slack_ts = {entry.index: meta.slack_ts for entry, meta in zip(entries, metas, strict=False)}
    held = shown_messages(((slack_ts.get(entry.index), entry) for entry in entries), ctx.shown)
    # A message with no text (the run's task cards, alone in theirs) has nothing to read:
    # left out, never written as a blank line.
    return [
        HistoryLine(slack_time(m.ts), m.user, m.text, held.get((m.ts, m.text)))
        for m in messages
        if m.text.strip()
    ]


def message_text(entry: Entry) -> str | None:
    """The Slack message text an entry carries: a person's text, or a reply the bot posted."""
    if isinstance(entry, UserEntry):
        return entry.content.text
    if isinstance(entry, AssistantEntry) and isinstance(entry.content, PostMessage):
        return entry.content.text
    return None


def shown_messages(
    entries: Iterable[tuple[str | None, Entry]], shown: ShownPrompt
) -> dict[tuple[str | None, str], int]:
    """(Slack ts, text) -> index, for each message the last prompt showed whole as an entry.
    The text is part of the key: a message edited since it was recorded is not the entry."""
    held: dict[tuple[str | None, str], int] = {}
    for ts, entry in entries:
        text = message_text(entry)
        if text is not None and shown.in_full(entry.index):
            held[(ts, text)] = entry.index
    return held


def format_history(oldest_first: Sequence[HistoryLine], call: GetThreadHistory) -> str:
    """The system entry for a history call: `limit` messages in the order asked for, each as
    `[TIMESTAMP] <@U…>: TEXT`, or, for consecutive messages the prompt shows whole as entries,
    one line `(entries 12, 14)` (`(entry 12)` for one)."""
    ordered = oldest_first if call.ascending else oldest_first[::-1]
    chosen = ordered[: call.limit or HISTORY_DEFAULT_LIMIT]
    order = "oldest first" if call.ascending else "newest first"
    noun = "message" if len(chosen) == 1 else "messages"
    lines = [f"Thread history ({len(chosen)} {noun}, {order}):"]
    named: list[int] = []
    for line in chosen:
        if line.entry is not None:
            named.append(line.entry)
            continue
        if named:
            lines.append(_entries(named))
            named = []
        lines.append(f"[{line.timestamp}] {line.author}: {line.text}")
    if named:
        lines.append(_entries(named))
    return "\n".join(lines)


def _entries(indexes: list[int]) -> str:
    if len(indexes) == 1:
        return f"(entry {indexes[0]})"
    return f"(entries {', '.join(str(i) for i in indexes)})"
