"""postMessage: a reply in the run's own thread, Markdown rendered by Slack.

Each Slack message carries metadata naming the log entry (and part, for a long reply split in
several) it comes from. The entry is recorded before it is posted, and marked posted after;
a run cut short in between (the process died) cannot know whether Slack got the message, so
the resumed run looks for that metadata in the thread before posting what is missing.

A post over the run's caps (`assistant.post_limits`), or with nothing visible in it, stays
recorded as the model's call and is followed by an `Error:` entry saying it was not posted and
why; a resumed run finds that entry and never posts it either.

A text streamed while the model wrote it (`assistant.slack_stream`) is finished here, once its
call is recorded: its streams are stopped with the same metadata, and what could not be
streamed is posted whole. A run resumed after a crash first deletes the streams the dead
process left unfinished (`finish_interrupted_streams`), then posts what is missing.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assistant.deferral import RESTARTED
from assistant.feedback import feedback_blocks
from assistant.runs import ensure_lease
from assistant.slack_stream import drop_stream
from assistant.slack_text import markdown_blocks, neutralize_mentions, split_message
from context.entry import Entry
from context.storage import ThreadMessage
from context.toolcalls import PostMessage

if TYPE_CHECKING:
    from assistant.recorder import Recorder
    from assistant.slack_stream import PostStream
    from assistant.tools.run_context import RunContext

POST_EVENT = "assistant_post"
PAGE_SIZE = 200
REFUSED = "Error: the postMessage of entry {index} was not posted: {why}."
_REFUSED = re.compile(r"Error: the postMessage of entry (\d+) was not posted: ")


def post_metadata(index: int, part: int) -> dict[str, Any]:
    return {"event_type": POST_EVENT, "event_payload": {"entry": index, "part": part}}


def final_blocks(ctx: RunContext, index: int) -> list[dict[str, Any]]:
    """Blocks shown under the last Slack message of the post of entry `index`, streamed or
    posted whole ([]: none): the one place that decides what the final message of an answer
    carries: the feedback buttons (assistant.feedback)."""
    return feedback_blocks(index)


async def post_message(
    call: PostMessage, ctx: RunContext, index: int, stream: PostStream | None = None
) -> str | None:
    """`stream`: the call's text as it was streamed while the model wrote it."""
    chunks = _chunks(call, ctx)
    why = ctx.posts.refusal(call.text, len(chunks))
    if why is not None:
        if stream is not None:
            await stream.discard()
        return REFUSED.format(index=index, why=why)
    ctx.posts.charge(call.text, len(chunks))
    blocks = final_blocks(ctx, index)
    already: dict[int, str] = {}
    if stream is not None:
        metadata = [post_metadata(index, part) for part in range(len(chunks))]
        already = await stream.finish(chunks, metadata, blocks)
    await _post(ctx, index, chunks, already, blocks)
    return None


def _chunks(call: PostMessage, ctx: RunContext) -> list[str]:
    """The Slack messages a postMessage becomes."""
    return split_message(neutralize_mentions(call.text, ctx.posts.caps.people_per_message))


async def _post(
    ctx: RunContext,
    index: int,
    chunks: list[str],
    already: dict[int, str],
    blocks: list[dict[str, Any]],
) -> None:
    """Post the parts Slack does not have (`already`: ts by part), the last one with
    `blocks` under it, and mark the entry posted."""
    # Channel and thread come from the run, never from the model: it cannot post elsewhere.
    assert ctx.client is not None, "postMessage needs Slack"
    posted = []
    for part, chunk in enumerate(chunks):
        ts = already.get(part)
        if ts is None:
            ensure_lease()  # a run that may have lost its thread to another posts nothing
            last = blocks if part == len(chunks) - 1 else []
            response = await ctx.client.chat_postMessage(
                channel=ctx.key.channel,
                thread_ts=ctx.key.thread_ts,
                text=chunk,
                blocks=markdown_blocks(chunk) + last,
                metadata=post_metadata(index, part),
            )
            ts = response["ts"]
        posted.append(ThreadMessage(ts=ts, user=ctx.bot_mention, text=chunk))
    await asyncio.to_thread(ctx.store.mark_posted, ctx.key, index, posted[-1].ts, posted)


async def finish_interrupted_streams(
    ctx: RunContext, recorder: Recorder | None, cause: str = RESTARTED
) -> None:
    """Before a run goes on: the streams its thread's last run left open. One stopped with a
    post's metadata is a whole message (`finish_interrupted_posts` finds it); any other was
    cut short, and is deleted: its text, if its call was recorded, is posted whole after, and
    if not, the model is asked again. `recorder`: where to say so (None: nowhere), after
    `cause`: why that run was cut short."""
    open_streams = await asyncio.to_thread(ctx.store.open_streams, ctx.key)
    if not open_streams:
        return
    whole = {ts for ts, _ in await _posts_in_thread(ctx)}
    cut = [ts for ts in open_streams if ts not in whole]
    for ts in cut:
        assert ctx.client is not None
        await drop_stream(ctx, ts, ctx.client)
    await asyncio.to_thread(ctx.store.set_open_streams, ctx.key, [])
    if cut and recorder is not None:
        what = (
            "the unfinished message it was streaming was deleted"
            if len(cut) == 1
            else f"the {len(cut)} unfinished messages it was streaming were deleted"
        )
        await recorder.record(ctx.key, f"{cause}; {what}.")


async def finish_interrupted_posts(
    ctx: RunContext, recorder: Recorder, after: int, cause: str = RESTARTED
) -> None:
    """Before a run answers entries from `after` on: any postMessage recorded after them but
    not marked posted was cut short (`cause`: a crash, Slack failing); post what Slack does not
    have, once."""
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
        await _post(ctx, entry.index, chunks, already, final_blocks(ctx, entry.index))
        outcome = "had reached Slack" if already else "was posted now"
        await recorder.record(
            ctx.key,
            f"{cause}; the message of entry {entry.index} {outcome}.",
        )


def _refused(entries: Sequence[Entry]) -> set[int]:
    """The indexes of postMessage entries that an `Error:` entry says were not posted."""
    found = (_REFUSED.match(e.content) for e in entries if isinstance(e.content, str))
    return {int(match.group(1)) for match in found if match}


async def _posted_parts(ctx: RunContext, index: int) -> dict[int, str]:
    """The parts of entry `index` already in the thread, by the metadata they carry."""
    return {
        int(payload.get("part", 0)): ts
        for ts, payload in await _posts_in_thread(ctx)
        if payload.get("entry") == index
    }


async def _posts_in_thread(ctx: RunContext) -> list[tuple[str, dict[str, Any]]]:
    """The thread's messages that carry a post's metadata: (ts, its payload)."""
    assert ctx.client is not None
    found: list[tuple[str, dict[str, Any]]] = []
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
            if metadata.get("event_type") == POST_EVENT:
                found.append((message["ts"], payload))
        cursor = (page.get("response_metadata") or {}).get("next_cursor")
        if not cursor:
            return found
