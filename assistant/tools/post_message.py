"""postMessage: a reply in the run's own thread, Markdown rendered by Slack.

Each Slack message carries metadata naming the log entry (and part, for a long reply split in
several) it comes from. The entry is recorded before it is posted, and marked posted after;
a run cut short in between (the process died) cannot know whether Slack got the message, so
the resumed run looks for that metadata in the thread before posting what is missing.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from assistant.runs import ensure_lease
from assistant.slack_text import markdown_blocks, neutralize_broadcasts, split_message
from context.storage import ThreadMessage
from context.toolcalls import PostMessage

if TYPE_CHECKING:
    from assistant.agent import RunContext
    from assistant.recorder import Recorder

POST_EVENT = "assistant_post"
PAGE_SIZE = 200


def post_metadata(index: int, part: int) -> dict[str, Any]:
    return {"event_type": POST_EVENT, "event_payload": {"entry": index, "part": part}}


async def post_message(call: PostMessage, ctx: RunContext, index: int) -> str | None:
    await _post(ctx, index, call, already={})
    return None


async def _post(ctx: RunContext, index: int, call: PostMessage, already: dict[int, str]) -> None:
    # Channel and thread come from the run, never from the model: it cannot post elsewhere.
    assert ctx.client is not None, "postMessage needs Slack"
    posted, last_ts = [], ""
    for part, chunk in enumerate(split_message(neutralize_broadcasts(call.text))):
        if part in already:
            last_ts = already[part]
            continue
        ensure_lease()  # a run that may have lost its thread to another posts nothing
        response = await ctx.client.chat_postMessage(
            channel=ctx.key.channel,
            thread_ts=ctx.key.thread_ts,
            text=chunk,
            blocks=markdown_blocks(chunk),
            metadata=post_metadata(index, part),
        )
        last_ts = response["ts"]
        posted.append(ThreadMessage(ts=last_ts, user=ctx.bot_mention, text=chunk))
    await asyncio.to_thread(ctx.store.mark_posted, ctx.key, index, last_ts, posted)


async def finish_interrupted_posts(ctx: RunContext, recorder: Recorder, after: int) -> None:
    """Before a run answers entries from `after` on: any postMessage recorded after them but
    not marked posted was cut short by a crash; post what Slack does not have, once."""
    metas = await asyncio.to_thread(ctx.store.metadata, ctx.key, after)
    for entry, meta in zip(ctx.log.entries[after:], metas, strict=False):
        if not isinstance(entry.content, PostMessage) or meta.slack_ts is not None:
            continue
        already = await _posted_parts(ctx, entry.index)
        await _post(ctx, entry.index, entry.content, already)
        outcome = "had reached Slack" if already else "was posted now"
        await recorder.record(
            ctx.key,
            f"The process restarted during this run; the message of entry {entry.index} "
            f"{outcome}.",
        )


async def _posted_parts(ctx: RunContext, index: int) -> dict[int, str]:
    """The parts of entry `index` already in the thread, by the metadata they carry."""
    assert ctx.client is not None
    found: dict[int, str] = {}
    cursor = None
    while True:
        page = await ctx.client.conversations_replies(
            channel=ctx.key.channel,
            ts=ctx.key.thread_ts,
            include_all_metadata=True,
            limit=PAGE_SIZE,
            cursor=cursor,
        )
        for message in page.get("messages", []):
            metadata = message.get("metadata") or {}
            payload = metadata.get("event_payload") or {}
            if metadata.get("event_type") == POST_EVENT and payload.get("entry") == index:
                found[int(payload.get("part", 0))] = message["ts"]
        cursor = (page.get("response_metadata") or {}).get("next_cursor")
        if not cursor:
            return found
