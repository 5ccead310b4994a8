"""getThreadHistory: the thread's messages, newest first unless asked otherwise."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from slack_sdk.errors import SlackApiError

from assistant.history import slack_time
from context.toolcalls import HISTORY_DEFAULT_LIMIT, GetThreadHistory

if TYPE_CHECKING:
    from assistant.tools.run_context import RunContext


class HistoryLine(NamedTuple):
    timestamp: str
    author: str
    text: str


async def get_thread_history(call: GetThreadHistory, ctx: RunContext, index: int) -> str | None:
    assert ctx.history is not None, "getThreadHistory needs Slack"
    try:
        messages = await ctx.history.messages(ctx.key)
    except SlackApiError as exc:
        # A failed read is news for the model, not the end of the run: it can still answer.
        return f"Error: Slack did not give the thread history ({exc.response.get('error')})."
    lines = [HistoryLine(slack_time(m.ts), m.user, m.text) for m in messages]
    return format_history(lines, call)


def format_history(oldest_first: Sequence[HistoryLine], call: GetThreadHistory) -> str:
    """The system entry for a history call: `limit` messages in the order asked for."""
    ordered = oldest_first if call.ascending else oldest_first[::-1]
    chosen = ordered[: call.limit or HISTORY_DEFAULT_LIMIT]
    order = "oldest first" if call.ascending else "newest first"
    noun = "message" if len(chosen) == 1 else "messages"
    lines = [f"Thread history ({len(chosen)} {noun}, {order}):"]
    lines += [f"[{line.timestamp}] {line.author}: {line.text}" for line in chosen]
    return "\n".join(lines)
