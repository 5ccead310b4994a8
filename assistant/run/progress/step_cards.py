"""A streamed run's steps shown as task cards (docs/architecture.md#thinking-steps): what is
shown is `assistant.run.progress.steps` of the run's log, sent as `task_update` chunks as it
changes.

The cards go into a stream of their own, in Slack's timeline display, started at the first
step to show; the run's next post goes on in that same message, so the cards stand above the
answer's text: one that streams takes the stream over (`take`), one posted whole ends it with
its text (`finish_with`), as a failed run's apology does. A stream no post took (the run ended
without one) is stopped as it is, with the app's notice metadata, so it is never taken for a
half-written post. Like a post's streams it is in the
store's open streams from before Slack is asked until it is stopped: a crash leaves it to the
resumed run, which deletes it. Cards are shown as far as Slack lets them: a failed call, or
a call past the stream tiers, shows no more cards in the run; it never fails the run.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.run.core.lease import ensure_lease
from assistant.run.core.leftovers import (
    NOTICE_EVENT,
    briefly,
    confirm_start,
    drop_stream,
    forget_or_owe,
    start_marker,
)
from assistant.run.core.pacing import Clock, WorkspacePacing
from assistant.run.progress.steps import steps
from assistant.slack.connection import SLACK_FAILURES, may_pass, retry_after
from context.entry import Entry
from context.storage import OpenStream
from context.storage.async_store import async_store

if TYPE_CHECKING:
    from assistant.run.core.run_context import RunContext

log = logging.getLogger(__name__)

DISPLAY_MODE = "timeline"  # each card in the message, in order with the streamed text
# Cards one stream shows at most: Slack holds a message to 50 blocks ("Block Kit": "up to 50
# blocks in each message"), and the answer's text and its feedback buttons need some of them.
MAX_CARDS = 40
MAX_DETAILS = 256  # characters of a task_update's details (assistant/fakes/slack/chunks.py)
STOP_ATTEMPTS = 3  # a stop Slack answered 429 is sent again, this many times in all
# A call's card shows its server's progress at most this often: a server may notify many times
# a second, and each shown is a chat.appendStream of the workspace's Tier 4 (also counted).
PROGRESS_SECONDS = 3.0
STEPS_METADATA = {"event_type": NOTICE_EVENT, "event_payload": {"kind": "steps"}}


def text_args(
    chunked: bool, text: str | None, cards: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A stream call's text (and `cards` before it), the way its stream started (Slack holds
    a stream to one): `markdown_text`, or chunks, as a stream with cards in it must be."""
    if not (chunked or cards):
        return {"markdown_text": text} if text else {}
    chunks = (cards or []) + ([{"type": "markdown_text", "text": text}] if text else [])
    return {"chunks": chunks} if chunks else {}


class StepCards:
    """The task cards of one run's steps."""

    def __init__(
        self,
        ctx: RunContext,
        client: AsyncWebClient,
        pacing: WorkspacePacing,
        recipient: str | None,
        first: int,
        clock: Clock = time.monotonic,
    ) -> None:
        """`client`: for the stream calls (no retries); `first`: the first entry the run
        answers (its steps are those from there on)."""
        self._clock = clock
        self._progress_at: dict[str, float] = {}  # step id -> when its progress was last shown
        self._sending: set[str] = set()  # steps whose progress is being sent
        self._ctx = ctx
        self._client = client
        self._pacing = pacing
        self._recipient = recipient
        self._first = first
        self._new: list[Entry] = []  # recorded since the log the model was last shown
        # step id -> the status and title Slack shows (a call's title changes while it
        # waits for a person's approval)
        self._shown: dict[str, tuple[str, str]] = {}
        self._cards = 0  # cards in the stream now open (or the next one)
        self._hidden: set[str] = set()  # steps past MAX_CARDS: never shown
        self._off = False
        self.ts: str | None = None  # the cards' stream, while no post has taken it

    def pending(self) -> list[dict[str, Any]]:
        """The chunks of the steps whose status Slack does not show yet."""
        if self._off:
            return []
        entries = list(self._ctx.log.entries)
        last = entries[-1].index if entries else -1
        entries += [entry for entry in self._new if entry.index > last]
        room = MAX_CARDS - self._cards
        chunks: list[dict[str, Any]] = []
        for step in steps(entries, self._first, self._ctx.words):
            chunk = step.chunk()
            if step.id in self._hidden or self._shown.get(step.id) == _showing(chunk):
                continue
            if step.id not in self._shown and room <= 0:
                if not self._hidden:
                    log.info(
                        "%s: no more than %d step cards in one message", self._ctx.key, MAX_CARDS
                    )
                self._hidden.add(step.id)
                continue
            room -= step.id not in self._shown
            chunks.append(chunk)
        return chunks

    async def note(self, *entries: Entry) -> None:
        """Entries the run recorded (a tool call, its result): show what they change."""
        self._new += entries
        chunks = self.pending()
        if not chunks:
            return
        try:
            if self.ts is None:
                await self._start(chunks)
            elif self._pacing.appends.take():
                ensure_lease()
                await self._client.chat_appendStream(
                    channel=self._ctx.key.channel, ts=self.ts, chunks=chunks
                )
                self._mark(chunks)
        except SLACK_FAILURES as exc:
            log.info("no more step cards in %s: %s", self._ctx.key, briefly(exc))
            self._off = True

    async def progress(self, index: int, text: str) -> None:
        """A server's progress on the call of entry `index`: its card's details, while the
        card shows in the stream, at most every PROGRESS_SECONDS and within the workspace's
        pace (one dropped is not owed: a later one, or the result, follows). Not an entry.
        The SDK tells each notification in a task of its own: one arriving while another is
        being sent is dropped, so that Slack gets them in order; one arriving once the card
        shows the call's end is dropped too."""
        step = f"entry-{index}"
        shown = self._shown.get(step)
        if self._off or self.ts is None or shown is None or step in self._hidden:
            return
        if shown[0] != "in_progress" or step in self._sending:
            return
        now = self._clock()
        last = self._progress_at.get(step)
        if last is not None and now - last < PROGRESS_SECONDS:
            return
        if not self._pacing.appends.take():
            return
        self._progress_at[step] = now
        status, title = shown
        chunk = {"type": "task_update", "id": step, "title": title, "status": status}
        chunk["details"] = text[:MAX_DETAILS]
        self._sending.add(step)
        try:
            ensure_lease()
            await self._client.chat_appendStream(
                channel=self._ctx.key.channel, ts=self.ts, chunks=[chunk]
            )
        except SLACK_FAILURES as exc:
            log.info("no more step cards in %s: %s", self._ctx.key, briefly(exc))
            self._off = True
        finally:
            self._sending.discard(step)

    def take(self) -> tuple[str | None, list[dict[str, Any]]]:
        """For a post's first stream: the cards' stream if there is one (the post goes on in
        it, and finishes it), and the cards Slack does not show yet (its first chunks)."""
        chunks = self.pending()
        self._mark(chunks)
        ts, self.ts = self.ts, None
        self._cards = 0  # the next cards go into a stream of their own
        return ts, chunks

    async def close(self) -> None:
        """Stop the cards' stream that no post took, keeping what it shows."""
        ts, self.ts = self.ts, None
        if ts is None:
            return
        key, chunks = self._ctx.key, self.pending()
        self._mark(chunks)
        self._cards = 0  # the next cards go into a stream of their own
        try:
            ensure_lease()
            await self._client.chat_stopStream(
                channel=key.channel,
                ts=ts,
                chunks=chunks or None,
                metadata=STEPS_METADATA,
                session_status=self._ctx.session_status,
            )
        except SLACK_FAILURES as exc:
            log.info("step cards %s could not be stopped: %s", ts, briefly(exc))
            undeleted = await drop_stream(self._ctx, ts, self._client)
            await forget_or_owe(self._ctx, OpenStream(ts), undeleted, [])
            return
        await async_store(self._ctx.store).write(
            self._ctx.store.change_open_streams, key, (), [OpenStream(ts)]
        )

    async def finish_with(
        self, text: str, metadata: dict[str, Any], blocks: list[dict[str, Any]]
    ) -> str | None:
        """Stop the cards' stream, if one is open, with `text` below the cards and `metadata`
        (`blocks` under it): one answer, one message. Its ts; None when no stream is open,
        or Slack did not take the stop (the stream is deleted then, and the caller posts the
        text whole)."""
        if self.ts is None:
            return None
        ts, chunks = self.take()
        assert ts is not None
        key = self._ctx.key
        for _ in range(STOP_ATTEMPTS):
            ensure_lease()
            try:
                await self._client.chat_stopStream(
                    channel=key.channel,
                    ts=ts,
                    metadata=metadata,
                    blocks=blocks or None,
                    chunks=[*chunks, {"type": "markdown_text", "text": text}],
                    session_status=self._ctx.session_status,
                )
            except SLACK_FAILURES as exc:
                if isinstance(exc, SlackApiError) and exc.response.status_code == 429:
                    await asyncio.sleep(retry_after(exc, 1.0))  # the stop must go through
                    continue
                log.info("step cards %s could not take the text: %s", ts, briefly(exc))
                break
            await async_store(self._ctx.store).write(
                self._ctx.store.change_open_streams, key, (), [OpenStream(ts)]
            )
            return ts
        undeleted = await drop_stream(self._ctx, ts, self._client)
        await forget_or_owe(self._ctx, OpenStream(ts), undeleted, [])
        return None

    async def _start(self, chunks: list[dict[str, Any]]) -> None:
        if not self._pacing.take_start():
            return  # past the tier: shown with the next card, or in the post's stream
        ensure_lease()
        key, store = self._ctx.key, self._ctx.store
        # Recorded before Slack is asked, as a post's stream is (assistant.run.streaming.post).
        asked = OpenStream(start_marker(self._ctx), "starting")
        await async_store(store).write(store.change_open_streams, key, [asked])
        try:
            response = await self._client.chat_startStream(
                channel=key.channel,
                thread_ts=key.thread_ts,
                chunks=chunks,
                task_display_mode=DISPLAY_MODE,
                recipient_user_id=self._recipient,
                recipient_team_id=key.team if self._recipient else None,
            )
        except SLACK_FAILURES as exc:
            if not may_pass(exc):
                await async_store(store).write(store.change_open_streams, key, (), [asked])
            # else: left recorded, for the thread's next run or sweep to find and delete
            raise
        self.ts = str(response["ts"])
        self._mark(chunks)
        await confirm_start(store, key, asked, self.ts)

    def _mark(self, chunks: list[dict[str, Any]]) -> None:
        for chunk in chunks:
            self._cards += chunk["id"] not in self._shown
            self._shown[chunk["id"]] = _showing(chunk)


def _showing(chunk: dict[str, Any]) -> tuple[str, str]:
    return chunk["status"], chunk["title"]
