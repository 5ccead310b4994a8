"""postMessage: a reply in the run's own thread, Markdown rendered by Slack.

Each Slack message carries metadata naming the log entry (and part, for a long reply split in
several) it comes from. The entry is recorded before it is posted, and marked posted after;
a run cut short in between (the process died) cannot know whether Slack got the message, so
the resumed run looks for that metadata in the thread before posting what is missing.

A post over the answer's caps (`assistant.run.core.post_limits`), or with nothing visible in it,
stays recorded as the model's call and is followed by an `Error:` entry saying it was not posted and
why; a resumed run finds that entry and never posts it either. One over them for its length
alone is posted cut, with a note: the entry saying so is recorded before it is posted, so a
resumed run posts the same cut (and the log never says more was shown than was).

A text streamed while the model wrote it (`assistant.run.streaming.post`) is finished here, once its
call is recorded: its streams are stopped with the same metadata, and what could not be
streamed is posted whole; an unfinished message it could not delete is named in the post's
result entry. A run resumed after a crash first deletes the streams the dead process left
unfinished (`finish_interrupted_streams`), then posts what is missing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assistant.i18n.words import ENGLISH, Words
from assistant.run.core.deferral import RESTARTED
from assistant.run.core.lease import ensure_lease
from assistant.run.core.leftovers import (
    POST_EVENT,
    Settled,
    deleted_earlier,
    settle_streams,
    still_there,
    thread_messages,
)
from assistant.run.core.post_limits import CUT_NOTE, Cut, cut_text
from assistant.run.progress.feedback_buttons import feedback_blocks
from assistant.slack.text import markdown_blocks
from context.entry import Entry
from context.post_refusals import REFUSED, refused_posts
from context.storage import ThreadMessage
from context.storage.async_store import async_store
from context.toolcalls import PostMessage

if TYPE_CHECKING:
    from assistant.run.core.recorder import Recorder
    from assistant.run.core.run_context import RunContext
    from assistant.run.streaming.post import PostStream

CUT = (
    "The postMessage of entry {index} is posted cut to its first {kept:,} characters, then the "
    'note "{note}": {why}.'
)
_CUT = re.compile(r"The postMessage of entry (\d+) is posted cut to its first ([\d,]+) ")


def post_metadata(index: int, part: int) -> dict[str, Any]:
    return {"event_type": POST_EVENT, "event_payload": {"entry": index, "part": part}}


def final_blocks(words: Words, index: int) -> list[dict[str, Any]]:
    """Blocks shown under the last Slack message of the post of entry `index`, streamed or
    posted whole ([]: none), in `words`' language: the one place that decides what the final
    message of an answer carries: the feedback buttons (assistant.run.progress.feedback_buttons)."""
    return feedback_blocks(index, words)


async def post_message(
    call: PostMessage, ctx: RunContext, index: int, stream: PostStream | None = None
) -> str | None:
    """`stream`: the call's text as it was streamed while the model wrote it."""
    chunks = ctx.posts.chunks(call.text)
    why = ctx.posts.refusal(call.text, len(chunks))
    if why is not None:
        if stream is not None:
            await stream.discard()  # a cut is posted whole: the stream showed more
        cut = ctx.posts.shortened(call.text, ctx.words)
        if cut is None or ctx.recorder is None:
            return " ".join(filter(None, [REFUSED.format(index=index, why=why), _left(stream)]))
        await _post_cut(ctx, ctx.recorder, index, cut, why)
        return _left(stream) or None
    ctx.posts.charge(call.text, len(chunks))
    blocks = final_blocks(ctx.words, index)
    already: dict[int, str] = {}
    if stream is not None:
        metadata = [post_metadata(index, part) for part in range(len(chunks))]
        already = await stream.finish(chunks, metadata, blocks)
    await _post(ctx, index, chunks, already, blocks)
    return _left(stream) or None


async def arrived_meanwhile(
    ctx: RunContext, recorder: Recorder, seen_through: int, index: int
) -> str | None:
    """The note for the log when people's messages were recorded after the prompt that
    wrote the post of entry `index` (through `seen_through`) and before its entry: it does
    not answer them, though the log's order alone says it follows them."""
    if index <= seen_through + 1:
        return None
    between = await recorder.entries(ctx.key, start=seen_through + 1)
    arrived = [e.index for e in between if e.index < index and e.role == "user"]
    if not arrived:
        return None
    if len(arrived) == 1:
        which, them = f"The message of entry {arrived[0]}", "it"
    else:
        numbers = ", ".join(map(str, arrived[:-1])) + f" and {arrived[-1]}"
        which, them = f"The messages of entries {numbers}", "them"
    return (
        f"{which} arrived while this answer (entry {index}) was being written, so entry "
        f"{index} does not answer {them}."
    )


def _left(stream: PostStream | None) -> str:
    """What the log says of unfinished messages the post's stream left in the thread."""
    return still_there(stream.left) if stream is not None else ""


async def _post_cut(ctx: RunContext, recorder: Recorder, index: int, cut: Cut, why: str) -> None:
    """Post the cut of the text of entry `index`, recorded first: the log says what is shown."""
    await recorder.record(ctx.key, CUT.format(index=index, kept=cut.kept, note=CUT_NOTE, why=why))
    chunks = ctx.posts.chunks(cut.text)
    ctx.posts.charge(cut.text, len(chunks), cut=True)
    await _post(ctx, index, chunks, {}, final_blocks(ctx.words, index))


def posted_text(entry: Entry, cuts: dict[int, int], words: Words = ENGLISH) -> str:
    """What a postMessage entry posts: its text, or its cut (`cuts`: kept by entry index),
    its note in `words`' language."""
    assert isinstance(entry.content, PostMessage)
    kept = cuts.get(entry.index)
    return entry.content.text if kept is None else cut_text(entry.content.text, kept, words)


def cuts_in(entries: Sequence[Entry]) -> dict[int, int]:
    """The postMessage entries a system entry says are posted cut: how much each keeps."""
    found = (_CUT.match(e.content) for e in entries if isinstance(e.content, str))
    return {int(m.group(1)): int(m.group(2).replace(",", "")) for m in found if m}


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
        last = blocks if part == len(chunks) - 1 else []
        if ts is None and part == 0 and ctx.cards is not None:
            # The run's steps are on show: the answer goes into their message, below them.
            ts = await ctx.cards.finish_with(chunk, post_metadata(index, part), last)
        if ts is None:
            ensure_lease()  # a run that may have lost its thread to another posts nothing
            response = await ctx.client.chat_postMessage(
                channel=ctx.key.channel,
                thread_ts=ctx.key.thread_ts,
                text=chunk,
                blocks=markdown_blocks(chunk) + last,
                metadata=post_metadata(index, part),
                **ctx.post_as,
            )
            ts = response["ts"]
        posted.append(ThreadMessage(ts=ts, user=ctx.bot_mention, text=chunk))
    await async_store(ctx.store).write(ctx.store.mark_posted, ctx.key, index, posted[-1].ts, posted)
    if ctx.recorder is not None:
        ctx.recorder.posted(ctx.key, index, posted[-1].ts)


async def finish_interrupted_streams(
    ctx: RunContext, recorder: Recorder | None, cause: str = RESTARTED
) -> Settled:
    """Before a run goes on, and when it fails: the streams its thread's runs left open
    (`assistant.run.core.leftovers.settle_streams`). One stopped with a post's metadata is a
    whole message (`finish_interrupted_posts` finds it); any other was cut short, and is
    deleted: its text, if its call was recorded, is posted whole after, and if not, the model
    is asked again. One that cannot be deleted stays owed. `recorder`: where to say what
    was done (None: the caller says it), after `cause`: why that run was cut short."""
    settled = await settle_streams(ctx)
    if recorder is None:
        return settled
    if settled.crashed:
        what = (
            "the unfinished message it was streaming was deleted"
            if settled.crashed == 1
            else f"the {settled.crashed} unfinished messages it was streaming were deleted"
        )
        await recorder.record(ctx.key, f"{cause}; {what}.")
    if settled.earlier:
        await recorder.record(ctx.key, deleted_earlier(settled.earlier))
    if settled.left:
        await recorder.record(ctx.key, still_there(settled.left))
    return settled


async def finish_interrupted_posts(
    ctx: RunContext, recorder: Recorder, after: int, cause: str = RESTARTED
) -> None:
    """Before a run answers entries from `after` on: any postMessage recorded after them but
    not marked posted was cut short (`cause`: a crash, Slack failing); post what Slack does not
    have, once."""
    metas = await async_store(ctx.store).read(ctx.store.metadata, ctx.key, after)
    refused = refused_posts(ctx.log.entries[after:])
    cuts = cuts_in(ctx.log.entries[after:])
    for entry, meta in zip(ctx.log.entries[after:], metas, strict=False):
        if not isinstance(entry.content, PostMessage) or meta.slack_ts is not None:
            continue
        if entry.index in refused:
            continue  # the log says it was not posted: it never will be
        already = await _posted_parts(ctx, entry.index)
        text = posted_text(entry, cuts, ctx.words)  # a cut recorded is posted as recorded
        chunks = ctx.posts.chunks(text)
        if not already and entry.index not in cuts:
            # The process died before deciding, or before recording its decision: decide now,
            # with this answer's caps (the calls' replies are not known any more).
            ctx.posts.new_reply()
            why = ctx.posts.refusal(text, len(chunks))
            cut = None if why is None else ctx.posts.shortened(text, ctx.words)
            if why is not None and cut is None:
                await recorder.record(ctx.key, REFUSED.format(index=entry.index, why=why))
                continue
            if why is not None and cut is not None:
                await _post_cut(ctx, recorder, entry.index, cut, why)
                await _restarted(ctx, recorder, entry.index, None, cause)
                continue
        ctx.posts.charge(text, len(chunks), cut=entry.index in cuts)
        await _post(ctx, entry.index, chunks, already, final_blocks(ctx.words, entry.index))
        outcome = "had reached Slack" if already else None
        await _restarted(ctx, recorder, entry.index, outcome, cause)


async def _restarted(
    ctx: RunContext, recorder: Recorder, index: int, outcome: str | None, cause: str
) -> None:
    await recorder.record(
        ctx.key, f"{cause}; the message of entry {index} {outcome or 'was posted now'}."
    )


async def _posted_parts(ctx: RunContext, index: int) -> dict[int, str]:
    """The parts of entry `index` already in the thread, by the metadata they carry."""
    return {
        int(payload.get("part", 0)): ts
        for ts, payload in await _posts_in_thread(ctx)
        if payload.get("entry") == index
    }


async def _posts_in_thread(ctx: RunContext) -> list[tuple[str, dict[str, Any]]]:
    """The thread's messages that carry a post's metadata: (ts, its payload)."""
    return [
        (message["ts"], (message.get("metadata") or {}).get("event_payload") or {})
        for message in await thread_messages(ctx)
        if (message.get("metadata") or {}).get("event_type") == POST_EVENT
    ]
