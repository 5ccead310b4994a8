"""postMessage: a reply in the run's own thread, Markdown rendered by Slack.

Each Slack message carries metadata naming the log entry (and part, for a long reply split in
several) it comes from. The entry is recorded before it is posted, and marked posted after;
a run cut short in between (the process died) cannot know whether Slack got the message, so
the resumed run looks for that metadata in the thread before posting what is missing.

A post over the run's caps (`assistant.post_limits`), or with nothing visible in it, stays
recorded as the model's call and is followed by an `Error:` entry saying it was not posted and
why; a resumed run finds that entry and never posts it either.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assistant.feedback import feedback_blocks
from assistant.runs import ensure_lease
from assistant.slack_text import markdown_blocks, neutralize_mentions, split_message
from context.entry import Entry
from context.storage import ThreadMessage
from context.toolcalls import PostMessage

if TYPE_CHECKING:
    from assistant.recorder import Recorder
    from assistant.tools.run_context import RunContext

POST_EVENT = "assistant_post"
PAGE_SIZE = 200
REFUSED = "Error: the postMessage of entry {index} was not posted: {why}."
_REFUSED = re.compile(r"Error: the postMessage of entry (\d+) was not posted: ")


def post_metadata(index: int, part: int) -> dict[str, Any]:
    return {"event_type": POST_EVENT, "event_payload": {"entry": index, "part": part}}


async def post_message(call: PostMessage, ctx: RunContext, index: int) -> str | None:
    chunks = _chunks(call, ctx)
    why = ctx.posts.refusal(call.text, len(chunks))
    if why is not None:
        return REFUSED.format(index=index, why=why)
    ctx.posts.charge(call.text, len(chunks))
    await _post(ctx, index, chunks, already={})
    return None


def _chunks(call: PostMessage, ctx: RunContext) -> list[str]:
    """The Slack messages a postMessage becomes."""
    return split_message(neutralize_mentions(call.text, ctx.posts.caps.people_per_message))


async def _post(ctx: RunContext, index: int, chunks: list[str], already: dict[int, str]) -> None:
    # Channel and thread come from the run, never from the model: it cannot post elsewhere.
    assert ctx.client is not None, "postMessage needs Slack"
    posted, last_ts = [], ""
    for part, chunk in enumerate(chunks):
        if part in already:
            last_ts = already[part]
            continue
        ensure_lease()  # a run that may have lost its thread to another posts nothing
        blocks = markdown_blocks(chunk)
        # Feedback (assistant.feedback): the answer's last message ends with the buttons.
        if part == len(chunks) - 1:
            blocks = [*blocks, *feedback_blocks(index)]
        response = await ctx.client.chat_postMessage(
            channel=ctx.key.channel,
            thread_ts=ctx.key.thread_ts,
            text=chunk,
            blocks=blocks,
            metadata=post_metadata(index, part),
        )
        last_ts = response["ts"]
        posted.append(ThreadMessage(ts=last_ts, user=ctx.bot_mention, text=chunk))
    await asyncio.to_thread(ctx.store.mark_posted, ctx.key, index, last_ts, posted)


async def finish_interrupted_posts(ctx: RunContext, recorder: Recorder, after: int) -> None:
    """Before a run answers entries from `after` on: any postMessage recorded after them but
    not marked posted was cut short by a crash; post what Slack does not have, once."""
    metas = await asyncio.to_thread(ctx.store.metadata, ctx.key, after)
    refused = _refused(ctx.log.entries[after:])
    for entry, meta in zip(ctx.log.entries[after:], metas, strict=False):
        if not isinstance(entry.content, PostMessage) or meta.slack_ts is not None:
            continue
        if entry.index in refused:
            continue  # the log says it was not posted: it never will be
        already = await _posted_parts(ctx, entry.index)
        chunks = _chunks(entry.content, ctx)
        if not already:
            # The process died before deciding, or before recording its decision: decide now,
            # with this run's caps (the calls' replies are not known any more).
            ctx.posts.new_reply()
            why = ctx.posts.refusal(entry.content.text, len(chunks))
            if why is not None:
                await recorder.record(ctx.key, REFUSED.format(index=entry.index, why=why))
                continue
        ctx.posts.charge(entry.content.text, len(chunks))
        await _post(ctx, entry.index, chunks, already)
        outcome = "had reached Slack" if already else "was posted now"
        await recorder.record(
            ctx.key,
            f"The process restarted during this run; the message of entry {entry.index} "
            f"{outcome}.",
        )


def _refused(entries: Sequence[Entry]) -> set[int]:
    """The indexes of postMessage entries that an `Error:` entry says were not posted."""
    found = (_REFUSED.match(e.content) for e in entries if isinstance(e.content, str))
    return {int(match.group(1)) for match in found if match}


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
