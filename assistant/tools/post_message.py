"""postMessage: a reply in the run's own thread, Markdown rendered by Slack."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assistant.slack_text import markdown_blocks, neutralize_broadcasts, split_message
from context.storage import ThreadMessage
from context.toolcalls import PostMessage

if TYPE_CHECKING:
    from assistant.agent import RunContext


async def post_message(call: PostMessage, ctx: RunContext) -> str | None:
    # Channel and thread come from the run, never from the model: it cannot post elsewhere.
    assert ctx.client is not None and ctx.history is not None, "postMessage needs Slack"
    posted = []
    for chunk in split_message(neutralize_broadcasts(call.text)):
        response = await ctx.client.chat_postMessage(
            channel=ctx.key.channel,
            thread_ts=ctx.key.thread_ts,
            text=chunk,
            blocks=markdown_blocks(chunk),
        )
        posted.append(ThreadMessage(ts=response["ts"], user=ctx.bot_mention, text=chunk))
    await ctx.history.remember(ctx.key, posted)
    return None
