"""One model call whose postMessage texts go into Slack as the model writes them
(docs/architecture.md#streamed-answers): each tool call is recorded and carried out once it
is complete, as the agent does with a whole answer, and the reply's usage goes to its first
entry once the answer is over (a streamed answer's usage comes last)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from assistant.model.attempts import ModelError, timed_out_note
from assistant.model.completion import ModelReply, RawToolCall
from assistant.model.stream import (
    CallArguments,
    CallEnded,
    CallStarted,
    ReplyEnded,
    StepEvent,
    TimedOut,
)
from assistant.run.core.lease import note_shown, run_stopping
from assistant.run.core.run_context import RunContext
from assistant.run.streaming.post import PostStream
from assistant.run.streaming.streams import SlackStreaming
from context.storage import EntryMeta
from context.storage.async_store import async_store

log = logging.getLogger(__name__)

# The agent's: record and carry out one call, (finished, its entry's index: None when it was
# not recorded, past the reply's cap); a whole reply.
OneCall = Callable[
    [RunContext, RawToolCall, EntryMeta | None, int, PostStream | None],
    Awaitable[tuple[bool, int | None]],
]
CarryOut = Callable[[RunContext, ModelReply, int], Awaitable[bool]]


async def streamed_step(
    events: AsyncIterator[StepEvent],
    streaming: SlackStreaming,
    ctx: RunContext,
    seen_through: int,
    one_call: OneCall,
    carry_out: CarryOut,
) -> bool:
    """Carry out the reply whose `events` arrive; True once the request is finished."""
    ctx.posts.new_reply()
    stream: PostStream | None = None
    first: int | None = None  # the reply's first entry
    finished = False
    try:
        async for event in events:
            if isinstance(event, CallStarted) and event.name == "postMessage":
                # A post past the reply's tool calls is refused: nothing of it is shown.
                stream = None if finished or ctx.posts.calls_used_up else streaming.open(ctx)
            elif isinstance(event, CallArguments) and stream is not None:
                stream.feed(event.piece)
            elif isinstance(event, CallEnded) and not finished:
                if stream is not None:
                    stream.complete()  # before any await: a call that came whole is posted so
                raw = RawToolCall(event.name, event.arguments, event.id)
                finished, index = await one_call(ctx, raw, None, seen_through, stream)
                stream, first = None, index if first is None else first
            elif isinstance(event, TimedOut):
                await _note_timed_out(ctx, event)
            elif isinstance(event, ReplyEnded):
                if not event.reply.calls:  # plain text: as the agent does with it
                    return await carry_out(ctx, event.reply, seen_through)
                await _record_usage(ctx, first, event.reply)
    except ModelError:
        if stream is not None:
            await stream.discard()
        if not finished:
            raise
        log.info("the model's answer in %s broke off after finishRequest", ctx.key)
    except BaseException:
        if stream is not None and run_stopping():
            # Its process stops (the run stays owed): take back the half message now, as
            # far as time allows; a resumed run deletes what is left.
            with contextlib.suppress(Exception):
                await stream.discard()
        elif stream is not None:
            # What it streamed is left to a resumed run to clean up; stopped by a person,
            # to stay as it is.
            await stream.cancel()
            note_shown([(part.ts, part.shown) for part in stream.parts])
        raise
    return finished


async def _record_usage(ctx: RunContext, first: int | None, reply: ModelReply) -> None:
    """The reply's usage, on its first entry (a streamed answer's usage comes last)."""
    if first is not None:
        usage = usage_of(reply)
        # The call's hold counted in the same write (`RunContext.call_hold`).
        settle = ctx.call_hold.take(usage)
        await async_store(ctx.store).write(ctx.store.set_usage, ctx.key, first, usage, settle)


async def _note_timed_out(ctx: RunContext, event: TimedOut) -> None:
    """The log says why the answer took so long, before its calls (docs/log-format.md)."""
    if ctx.recorder is not None:
        await ctx.recorder.record(ctx.key, timed_out_note(event.attempts, event.seconds))


def usage_of(reply: ModelReply) -> EntryMeta:
    """A model call's figures, for the side metadata of the first entry of its reply."""
    return EntryMeta(
        model=reply.model,
        prompt_tokens=reply.prompt_tokens,
        cached_tokens=reply.cached_tokens,
        completion_tokens=reply.completion_tokens,
        latency_ms=round(reply.latency_ms, 1),
    )
