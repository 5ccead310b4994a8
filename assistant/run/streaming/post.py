"""One postMessage call's text streamed into its thread while the model writes it
(docs/architecture.md#streamed-answers; `assistant.run.streaming.streams` opens them).

A `PostStream` starts a stream once some text is sure (`assistant.run.streaming.text`), or goes
on in the run's step cards' stream (`assistant.run.progress.step_cards`), and appends in batches: at
most one call per `APPEND_INTERVAL`, within the tiers (`assistant.run.core.pacing`); a
text past one message's limit goes on in a second stream. Each start is in the store before
Slack is asked, its ts before anything more is sent. `finish` stops each with the rest of its
text and the post's metadata; one that cannot be (a call failed, or it does not start as its
message will) is deleted, to be posted whole with every message after it; one that cannot be
deleted stays owed, as does a lost start (`assistant.run.core.leftovers`): `left` says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.model.json_stream import MemberDecoder
from assistant.run.core.lease import LeaseLost, ensure_lease
from assistant.run.core.leftovers import (
    Undeleted,
    briefly,
    confirm_start,
    drop_stream,
    forget_or_owe,
    settle_lost_starts,
    start_marker,
)
from assistant.run.core.pacing import WorkspacePacing
from assistant.run.progress.step_cards import DISPLAY_MODE, STOP_ATTEMPTS, text_args
from assistant.run.streaming.text import StreamedPart, shown_parts
from assistant.slack.connection import SLACK_FAILURES, may_pass, retry_after
from assistant.slack.text import is_invisible
from context.storage import OpenStream
from context.storage.async_store import async_store

if TYPE_CHECKING:
    from assistant.run.core.run_context import RunContext

log = logging.getLogger(__name__)

APPEND_INTERVAL = 0.25  # seconds between two calls to one stream, at least
MIN_BATCH = 24  # characters: fewer wait for more, up to BATCH_WAIT
BATCH_WAIT = 1.0


class PostStream:
    """One postMessage call's text, streamed while the model writes it."""

    def __init__(
        self,
        ctx: RunContext,
        client: AsyncWebClient,
        pacing: WorkspacePacing,
        recipient: str | None,
        refused: Callable[[SlackApiError], None],
    ) -> None:
        """`client`: for the stream calls (no retries); `recipient`: the person answered;
        `refused`: told of an error Slack answered a start with."""
        self._ctx = ctx
        self._client = client
        self._pacing = pacing
        self._recipient = recipient
        self._refused = refused
        self._decoder = MemberDecoder("text")
        self._text: list[str] = []
        self.parts: list[StreamedPart] = []
        self._more = asyncio.Event()
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        self._last_call = 0.0
        self._lost: list[OpenStream] = []  # starts whose answers were lost
        self._cancelled = False  # the run is stopping: no call starts from now on
        self.left: list[Undeleted] = []  # unfinished messages still in the thread

    def feed(self, piece: str) -> None:
        """The next piece of the call's arguments, as the model wrote it."""
        decoded = self._decoder.feed(piece)
        if not decoded or self._closing.is_set():
            return
        self._text.append(decoded)
        self._more.set()
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    def complete(self) -> None:
        """The call is complete: nothing new is sent from now on (the rest goes with the
        stop). Called before anything else is awaited, so a call that came whole at once
        starts no stream."""
        self._closing.set()
        self._more.set()

    async def cancel(self) -> None:
        """The run is stopping: no Slack call more (a resumed run cleans up). The call under
        way is let finish (within the client's timeout), so that what Slack shows is what
        `parts` says and a stream it started is in the store: a stop pressed meanwhile
        quotes it and keeps it. Returns once the sender has ended; cut short again (its
        process stops), at once."""
        self._cancelled = True
        self.complete()
        if self._task is not None:
            try:
                await asyncio.wait({self._task})
            except asyncio.CancelledError:
                self._task.cancel()
                raise

    async def finish(
        self, chunks: list[str], metadata: list[dict[str, Any]], blocks: list[dict[str, Any]]
    ) -> dict[int, str]:
        """Stop the streams of the call's post, whose messages are `chunks`: each with the
        rest of its text and its `metadata`, the last one with `blocks` under it. The ts of
        the messages finished so, by part; the others are deleted, to be posted whole."""
        await self._settle()
        finished: dict[int, str] = {}
        for index, part in enumerate(self.parts):
            keep = part.ok and index < len(chunks) and len(finished) == index
            if keep and not chunks[index].startswith(part.shown):
                log.warning("streamed message %s does not start as its post: replaced", part.ts)
                keep = False
            rest = chunks[index][len(part.shown) :] if keep else ""
            extra = blocks if index == len(chunks) - 1 else []
            if keep and await self._stop(part, rest, metadata[index], extra):
                finished[index] = part.ts
            else:
                await self._drop(part)  # it and every message after it are posted whole
        lost, self._lost = self._lost, []
        await settle_lost_starts(self._ctx, lost, self.left)  # before the text is posted whole
        return finished

    async def discard(self) -> None:
        """The call will not be posted (refused, invalid, the model failed): delete what it
        streamed."""
        with contextlib.suppress(Exception):
            await self._settle()
        await self._drop_all()

    async def _drop_all(self) -> None:
        dropped, self.parts = self.parts, []
        for part in dropped:
            await self._drop(part)
        lost, self._lost = self._lost, []
        await settle_lost_starts(self._ctx, lost, self.left)

    async def _settle(self) -> None:
        """Let the sender finish what it is doing; raise what stopped it, if not Slack."""
        self.complete()
        if self._task is not None:
            await asyncio.wait({self._task})
        failure, self._failure = self._failure, None
        if failure is not None:
            if not isinstance(failure, LeaseLost):
                with contextlib.suppress(Exception):  # its ts may not be in the store
                    await self._drop_all()
            raise failure

    # -- the sender ------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            while not self._closing.is_set():
                await self._more.wait()
                if self._closing.is_set():
                    return
                self._more.clear()
                if await self._show():
                    self._more.set()  # more is waiting for the pace or the tier
                await self._rest()
        except Exception as exc:  # LeaseLost, the store: raised to the run by `finish`
            self._failure = exc
            self._closing.set()

    async def _rest(self) -> None:
        """Until another call to Slack may be made, or the call is complete."""
        pause = self._last_call + APPEND_INTERVAL - time.monotonic()
        pause = max(pause, self._pacing.appends.wait())
        if pause > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), pause)

    async def _show(self) -> bool:
        """Start or append what is sure now; whether some of it had to wait."""
        text = "".join(self._text)
        shown = shown_parts(text, self._ctx.posts.caps.people_per_message)
        messages = max(1, shown.settled + bool(shown.parts[-1].strip()))
        if not is_invisible(text) and self._ctx.posts.refusal(text, messages, whole=False):
            # It will not be posted (the run's caps): nothing of it stays in the thread.
            self._closing.set()
            await self._drop_all()
            return False
        for index, sure in enumerate(shown.parts):
            if index == len(self.parts):
                if is_invisible(sure) or self._closing.is_set():
                    return False
                if not self._pacing.take_start():
                    self._closing.set()  # past the tier: the rest is posted whole
                    return False
                await self._start(sure)
                return index + 1 < len(shown.parts)  # the next message is due too
            part = self.parts[index]
            new = sure[len(part.shown) :]
            if not part.ok or not sure.startswith(part.shown):
                self._closing.set()
                return False
            settled = index < shown.settled
            if not new:
                if settled:
                    continue
                return False
            waited = time.monotonic() - self._last_call
            if not settled and len(new) < MIN_BATCH and waited < BATCH_WAIT:
                return True
            if not self._pacing.appends.take():
                return True
            await self._append(part, new)
            return settled and index + 1 < len(shown.parts)  # the next message is due
        return False

    async def _start(self, text: str) -> None:
        cards = self._ctx.cards
        taken, chunks = cards.take() if cards is not None else (None, [])
        if taken is not None:  # the steps' cards are on show: the answer goes on below them
            self.parts.append(StreamedPart(taken, "", chunked=True))
            await self._append(self.parts[-1], text, chunks)
            return
        ensure_lease()
        key, store = self._ctx.key, self._ctx.store
        # Recorded before Slack is asked: a start whose answer is lost, or a crash before
        # its ts is stored, leaves it findable (assistant.run.core.leftovers).
        asked = OpenStream(start_marker(self._ctx), "starting")
        await async_store(store).write(store.change_open_streams, key, [asked])
        if self._cancelled:  # meanwhile: the start is not asked for
            await async_store(store).write(store.change_open_streams, key, (), [asked])
            return
        try:
            response = await self._client.chat_startStream(
                channel=key.channel,
                thread_ts=key.thread_ts,
                **text_args(False, text, chunks),
                task_display_mode=DISPLAY_MODE if chunks else None,
                recipient_user_id=self._recipient,
                recipient_team_id=key.team if self._recipient else None,
                **self._ctx.post_as,
            )
        except SLACK_FAILURES as exc:
            if may_pass(exc):
                self._lost.append(asked)  # looked for in the thread once the post is done
            else:
                await async_store(store).write(store.change_open_streams, key, (), [asked])
            if isinstance(exc, SlackApiError):
                self._refused(exc)
            log.info("no stream in %s: %s", key, briefly(exc))
            self._closing.set()
            return
        finally:
            self._last_call = time.monotonic()  # the pace counts from a call's answer
        self.parts.append(StreamedPart(str(response["ts"]), text, chunked=bool(chunks)))
        # Its ts replaces the intent before anything else goes to it.
        await confirm_start(store, key, asked, str(response["ts"]))

    async def _append(self, part: StreamedPart, text: str, cards: list[Any] | None = None) -> None:
        ensure_lease()
        try:
            await self._client.chat_appendStream(
                channel=self._ctx.key.channel, ts=part.ts, **text_args(part.chunked, text, cards)
            )
        except SLACK_FAILURES as exc:
            if isinstance(exc, SlackApiError) and exc.response.status_code == 429:
                self._pacing.appends.hold(retry_after(exc, 1.0))  # not taken: sent again later
                return
            log.info("stream %s broke off: %s", part.ts, briefly(exc))
            part.ok = False  # it may or may not show this piece: it will be replaced
            self._closing.set()
            return
        finally:
            self._last_call = time.monotonic()
        part.shown += text

    async def _stop(
        self, part: StreamedPart, rest: str, metadata: dict[str, Any], blocks: list[dict[str, Any]]
    ) -> bool:
        for _ in range(STOP_ATTEMPTS):
            ensure_lease()
            try:
                await self._client.chat_stopStream(
                    channel=self._ctx.key.channel,
                    ts=part.ts,
                    metadata=metadata,
                    blocks=blocks or None,
                    session_status=self._ctx.session_status,
                    **text_args(part.chunked, rest),
                )
                return True
            except SLACK_FAILURES as exc:
                if isinstance(exc, SlackApiError) and exc.response.status_code == 429:
                    await asyncio.sleep(retry_after(exc, 1.0))  # the stop must go through
                    continue
                log.info("stream %s could not be stopped: %s", part.ts, briefly(exc))
                return False
        return False

    async def _drop(self, part: StreamedPart) -> None:
        undeleted = await drop_stream(self._ctx, part.ts, self._client)
        await forget_or_owe(self._ctx, OpenStream(part.ts), undeleted, self.left)
