"""Streamed messages that Slack has not confirmed finished or gone
(docs/architecture.md#streamed-answers): a thread's open streams, as the store keeps them
(`OpenStream`), and how they are settled.

- `drop_stream` stops a stream and deletes its message; Slack confirms it gone or not.
- A start whose answer was lost (HTTP 5xx, a dropped connection, a timeout) may or may not
  have made a message, and its ts is not known: it is recorded before Slack is asked, with the
  second of the newest message the run answers. It is found by reading the thread: the bot's
  messages from that second on that carry no metadata of the app's (every post carries
  `assistant_post`, every apology `assistant_notice`) are streams nobody finished.
- `settle_streams` takes a thread's open streams in turn: a stream stopped with a post's
  metadata is whole (the interrupted post finds it); any other, and whatever a lost start
  made, is deleted. One that cannot be deleted for now stays recorded, "owed", for the
  thread's next run or the sweep (`assistant.run.streaming.sweeper`); one Slack refuses to delete
  for good is left, and said so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.run.core.lease import ensure_lease
from assistant.slack.connection import SLACK_FAILURES, may_pass, slack_error
from context.storage import OpenStream, Store, ThreadKey
from context.storage.async_store import async_store

if TYPE_CHECKING:
    from assistant.run.core.run_context import RunContext

log = logging.getLogger(__name__)

POST_EVENT = "assistant_post"  # a post's messages (assistant.run.tools.post_message)
NOTICE_EVENT = "assistant_notice"  # the app's other messages: apologies
NOTICE_METADATA = {"event_type": NOTICE_EVENT, "event_payload": {"kind": "apology"}}
PAGE_SIZE = 200
_PERSON = re.compile(r"<@([UW][A-Z0-9]+)>")


def briefly(exc: BaseException) -> str:
    """A Slack failure in a word: Slack's error, or the kind of failure."""
    if isinstance(exc, SlackApiError):
        return slack_error(exc)
    return type(exc).__name__


@dataclass(frozen=True)
class Undeleted:
    """Why a message is still in the thread; `may_pass`: asking again may delete it."""

    why: str
    may_pass: bool = True


async def drop_stream(
    ctx: RunContext, ts: str, stream_client: AsyncWebClient | None = None
) -> Undeleted | None:
    """Stop a stream that will not be finished and delete its message: None once Slack
    confirms it gone, else why not."""
    assert ctx.client is not None
    ensure_lease()
    with contextlib.suppress(*SLACK_FAILURES):  # already stopped, or never started
        await (stream_client or ctx.client).chat_stopStream(
            channel=ctx.key.channel, ts=ts, session_status=ctx.session_status
        )
    try:
        await ctx.client.chat_delete(channel=ctx.key.channel, ts=ts)
    except SLACK_FAILURES as exc:
        if briefly(exc) == "message_not_found":
            return None  # gone already
        log.warning("could not delete streamed message %s: %s", ts, briefly(exc))
        return Undeleted(briefly(exc), may_pass(exc))
    return None


async def confirm_start(store: Store, key: ThreadKey, asked: OpenStream, ts: str) -> None:
    """The stream Slack made (`ts`) replaces its start (`asked`) in the store. The write
    lands even when the run is cancelled meanwhile, and the cancel goes on only after it: a
    stream left recorded as a start nobody confirmed is taken for a lost start and deleted,
    and a stop pressed just then keeps what it shows (assistant.run.stopping.stop)."""
    change = store.change_open_streams
    write = asyncio.ensure_future(async_store(store).write(change, key, [OpenStream(ts)], [asked]))
    try:
        await asyncio.shield(write)
    except asyncio.CancelledError:
        await asyncio.wait({write})
        if write.exception() is not None:  # left a start: the next run or sweep settles it
            log.warning("recording stream %s in %s failed: %s", ts, key, write.exception())
        raise


def start_marker(ctx: RunContext) -> str:
    """What a start recorded before Slack is asked names: the second of the newest person's
    message in the run's log (a Slack ts); the stream, if Slack makes it, comes after."""
    for entry in reversed(ctx.log.entries):
        if entry.role == "user":
            moment = datetime.strptime(entry.timestamp, "%Y-%m-%dT%H:%M:%SZ")
            return f"{int(moment.replace(tzinfo=UTC).timestamp())}.000000"
    return "0.000000"


def bot_user_id(ctx: RunContext) -> str | None:
    match = _PERSON.fullmatch(ctx.bot_mention)
    return match.group(1) if match else None


async def thread_messages(ctx: RunContext) -> list[dict[str, Any]]:
    """The thread's messages as Slack has them now, with their metadata."""
    assert ctx.client is not None
    found: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = await ctx.client.conversations_replies(
            channel=ctx.key.channel,
            ts=ctx.key.thread_ts,
            include_all_metadata=True,
            limit=PAGE_SIZE,
            cursor=cursor,
        )
        found += page.get("messages", [])
        cursor = (page.get("response_metadata") or {}).get("next_cursor")
        if not cursor:
            return found


def unfinished_since(messages: list[dict[str, Any]], bot: str, marker: str) -> list[str]:
    """The ts of the bot's messages from `marker`'s second on that carry none of the app's
    metadata: streams that were never stopped with a post's metadata."""
    second = int(marker.split(".")[0])
    return [
        message["ts"]
        for message in messages
        if message.get("user") == bot
        and int(str(message["ts"]).split(".")[0]) >= second
        and _event(message) not in (POST_EVENT, NOTICE_EVENT)
    ]


@dataclass
class Settled:
    """What settling a thread's open streams did."""

    crashed: int = 0  # streams a dead process left open, deleted
    earlier: int = 0  # owed streams, and what lost starts made, deleted
    left: list[Undeleted] = field(default_factory=list)  # still there: owed, retried

    @property
    def owed(self) -> bool:
        return any(undeleted.may_pass for undeleted in self.left)


async def settle_streams(ctx: RunContext) -> Settled:
    """Settle the thread's open streams (see the module); a Slack failure reading the thread
    leaves them all as they are, and raises."""
    settled = Settled()
    streams = await async_store(ctx.store).read(ctx.store.open_streams, ctx.key)
    if not streams:
        return settled
    messages = await thread_messages(ctx)
    whole = {m["ts"] for m in messages if _event(m) == POST_EVENT}
    for stream in streams:
        if stream.state == "open" and stream.ts in whole:
            # Stopped with its post's metadata: a whole message (finish_interrupted_posts).
            await async_store(ctx.store).write(ctx.store.change_open_streams, ctx.key, (), [stream])
            continue
        if stream.state == "starting":
            undeleted, dropped = await drop_lost_start(ctx, stream, messages)
        else:
            undeleted = await drop_stream(ctx, stream.ts)
            dropped = int(undeleted is None)
        if stream.state == "open":
            settled.crashed += dropped
        else:
            settled.earlier += dropped
        await forget_or_owe(ctx, stream, undeleted, settled.left)
    return settled


async def drop_lost_start(
    ctx: RunContext, stream: OpenStream, messages: list[dict[str, Any]]
) -> tuple[Undeleted | None, int]:
    """Delete what a start whose answer was lost made, found in the thread's `messages`:
    (why one is still there, or None; how many were deleted)."""
    bot = bot_user_id(ctx)
    if bot is None:
        return Undeleted("the bot's user id is not known"), 0
    dropped, refused = 0, None
    for ts in unfinished_since(messages, bot, stream.ts):
        undeleted = await drop_stream(ctx, ts)
        if undeleted is None:
            dropped += 1
        elif undeleted.may_pass:
            return undeleted, dropped  # the rest is looked for again on the next try
        else:
            refused = undeleted
    return refused, dropped


async def settle_lost_starts(
    ctx: RunContext, lost: list[OpenStream], left: list[Undeleted]
) -> None:
    """Find and delete what starts whose answers were lost made (one read of the thread);
    what stays is owed, for the thread's next run or the sweep. `left`: told of it."""
    if not lost:
        return
    try:
        messages = await thread_messages(ctx)
    except SLACK_FAILURES as exc:
        left.append(Undeleted(f"the thread could not be read: {briefly(exc)}"))
        return  # they stay recorded as starting
    for stream in lost:
        undeleted, _ = await drop_lost_start(ctx, stream, messages)
        await forget_or_owe(ctx, stream, undeleted, left)


async def forget_or_owe(
    ctx: RunContext, stream: OpenStream, undeleted: Undeleted | None, left: list[Undeleted]
) -> None:
    """Forget a stream confirmed gone, or refused for good; one that asking again may
    delete stays recorded (an open one becomes owed). `left`: told of what is still there."""
    if undeleted is not None:
        left.append(undeleted)
    if undeleted is not None and undeleted.may_pass:
        if stream.state == "open":
            owed = OpenStream(stream.ts, "owed")
            await async_store(ctx.store).write(
                ctx.store.change_open_streams, ctx.key, [owed], [stream]
            )
        return
    await async_store(ctx.store).write(ctx.store.change_open_streams, ctx.key, (), [stream])


def still_there(left: list[Undeleted]) -> str:
    """A sentence for the log about unfinished messages left in the thread ('' if none)."""
    owed = sorted({u.why for u in left if u.may_pass})
    refused = sorted({u.why for u in left if not u.may_pass})
    said = []
    if owed:
        said.append(
            f"An unfinished message could not be deleted yet ({', '.join(owed)}): it stays in "
            "the thread until a retry deletes it."
        )
    if refused:
        said.append(
            f"Slack refused to delete an unfinished message ({', '.join(refused)}): it stays "
            "in the thread."
        )
    return " ".join(said)


def _event(message: dict[str, Any]) -> str | None:
    return (message.get("metadata") or {}).get("event_type")


def deleted_earlier(count: int) -> str:
    if count == 1:
        return "An unfinished message left in the thread earlier was deleted."
    return f"{count} unfinished messages left in the thread earlier were deleted."
