"""One postMessage call's text streamed into its thread (assistant/run/streaming/post.py): the
stream recorded in the store before Slack is asked, stopped with the rest of the text and the
post's metadata; a streamed message that does not start as the post will is deleted, to be posted
whole; a discarded call leaves nothing; a refused start is told and nothing is left. On a real
store (SQLite and PostgreSQL) and the fake Slack over HTTP."""

from __future__ import annotations

import asyncio
import json

from slack_sdk.errors import SlackApiError

from assistant.run.core.pacing import StreamPacing
from assistant.run.core.run_context import RunContext
from assistant.run.streaming.post import PostStream
from context.storage import OpenStream, Store
from tests.run.conftest import ASKER, KEY

TIMEOUT = 60  # a wait on a condition, generous for a busy machine
METADATA = {"event_type": "assistant_answer", "event_payload": {"index": 2}}
ANSWER = "The deploy failed at step three, when the database migration timed out."


def stream_of(ctx: RunContext, refused: list[SlackApiError] | None = None) -> PostStream:
    assert ctx.client is not None
    told = refused if refused is not None else []
    return PostStream(ctx, ctx.client, StreamPacing().of(KEY.team), ASKER, told.append)


async def streamed(stream: PostStream, store: Store, text: str) -> None:
    """The model writes the call's arguments up to `text` (as JSON) and more to come, and the
    stream has started with some of it, its ts in the store."""
    stream.feed('{"text": ')
    stream.feed(json.dumps(text)[:-1])  # the string not closed yet: more may follow
    async with asyncio.timeout(TIMEOUT):
        while not stream.parts or store.open_streams(KEY) != [OpenStream(stream.parts[0].ts)]:
            await asyncio.sleep(0.01)


async def test_a_streamed_post_is_stopped_with_its_rest_and_metadata(ctx, slack, store) -> None:
    stream = stream_of(ctx)
    await streamed(stream, store, ANSWER)
    [part] = stream.parts
    stream.feed('", "reasoning": "answer"}')
    stream.complete()

    assert await stream.finish([ANSWER], [METADATA], []) == {0: part.ts}

    message = slack.store.get(KEY.channel, part.ts)
    assert message["text"] == ANSWER and message["streaming_state"] == "completed"
    assert slack.calls_to("chat.stopStream")[-1].params["metadata"] == METADATA
    # Still recorded until the post's entry is marked posted in one write (mark_posted).
    assert store.open_streams(KEY) == [OpenStream(part.ts)] and stream.left == []


async def test_a_stream_that_does_not_start_as_the_post_is_deleted(ctx, slack, store) -> None:
    stream = stream_of(ctx)
    await streamed(stream, store, ANSWER)
    [part] = stream.parts
    stream.complete()

    # What will be posted is not what was streamed (the caps cut it, say): posted whole.
    assert await stream.finish(["Something else entirely."], [METADATA], []) == {}

    assert [c.params["ts"] for c in slack.calls_to("chat.delete")] == [part.ts]
    assert slack.store.get(KEY.channel, part.ts) is None
    assert store.open_streams(KEY) == []


async def test_a_discarded_call_leaves_nothing_in_the_thread(ctx, slack, store) -> None:
    stream = stream_of(ctx)
    await streamed(stream, store, ANSWER)
    [part] = stream.parts

    await stream.discard()

    assert slack.store.get(KEY.channel, part.ts) is None
    assert store.open_streams(KEY) == []


async def test_a_refused_start_is_told_and_leaves_nothing(ctx, slack, store) -> None:
    refused: list[SlackApiError] = []
    stream = stream_of(ctx, refused)
    slack.fail("chat.startStream", "not_authorized")
    stream.feed('{"text": ')
    stream.feed(json.dumps(ANSWER)[:-1])
    async with asyncio.timeout(TIMEOUT):
        while not refused:
            await asyncio.sleep(0.01)
    stream.complete()

    assert await stream.finish([ANSWER], [METADATA], []) == {}  # posted whole by the caller
    assert refused[0].response["error"] == "not_authorized"
    assert stream.parts == [] and store.open_streams(KEY) == []
