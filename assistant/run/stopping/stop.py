"""The stop button's end of a run (docs/architecture.md#the-stop-button): once the scheduler
has stopped the run (or found the stop before one started), the streams Slack named stay as
they are, any other stream the run left open is stopped as it is, a system entry says who
pressed stop, when, and what had been shown, and raises answered_through to what the stop
covers (the requests count as answered: no apology), and the session leaves `processing`."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import ENGLISH
from assistant.run.approvals.entries import (
    STOPPED,
    Pending,
    outcome_message,
    pending_approval,
    stopped_text,
)
from assistant.run.approvals.sign_in import waiting_sign_in
from assistant.run.approvals.unfinished import stopped_during, unanswered_calls, unknown_outcome
from assistant.run.channels.languages import Languages
from assistant.run.core.lease import ensure_lease
from assistant.run.core.leftovers import briefly
from assistant.run.core.recorder import Recorder
from assistant.run.core.sessions import ACTIVE, AgentSessions
from assistant.run.loop.answer_so_far import answer_start
from assistant.slack.connection import SLACK_FAILURES
from context.entry import STOP_PREFIX, Entry, format_timestamp
from context.storage import StopRequest, ThreadKey
from context.storage.async_store import async_store
from context.toolcalls import ServerToolCall

log = logging.getLogger(__name__)

GONE = frozenset({"message_not_in_streaming_state", "message_not_found"})  # stopped already


@dataclass(frozen=True)
class StopRecorder:
    recorder: Recorder
    client: AsyncWebClient
    sessions: AgentSessions | None = None
    stream_client: AsyncWebClient | None = None  # for chat.stopStream, without retries
    languages: Languages | None = None  # the words of an approval's message (None: English)

    async def __call__(
        self, key: ThreadKey, stop: StopRequest, shown: list[tuple[str, str]]
    ) -> None:
        """`shown`: the run's streamed messages when it stopped, (ts, the text shown)."""
        sessions = self.sessions is not None and self.sessions.applies(key.team)
        kept = await self._keep_streams(key, stop, sessions)
        await self._end_calls(key, stop)
        entries = await self.recorder.entries(key)
        asker = next(
            (e.content.userid for e in reversed(entries[: stop.through + 1]) if e.role == "user"),
            None,
        )
        ensure_lease()
        await self.recorder.record(
            key, stop_entry(stop, asker, shown, kept), answered_through=stop.through
        )
        if sessions and self.sessions is not None:
            try:
                await self.sessions.set(key, ACTIVE)
            except SLACK_FAILURES as exc:
                log.info("ending the session in %s failed: %s", key, briefly(exc))

    async def _end_calls(self, key: ThreadKey, stop: StopRequest) -> None:
        """The stopped answer's calls of MCP servers' tools get their results before the
        stop's entry: one waiting for approval, or allowed and not made yet, is never made
        (its buttons' message says so); one being made has an unknown outcome."""
        store = self.recorder.store
        owed = await async_store(store).read(store.pending, key)
        entries = await self.recorder.entries(key)
        at = datetime.fromtimestamp(float(stop.at or 0), UTC)
        results: list[str] = []
        pending = pending_approval(entries)
        during = stopped_during(stop.user)
        # A call waiting for its person's sign-in was not made (allowed or not): it never is.
        signing = waiting_sign_in(entries)
        if signing is not None and (pending is None or pending.index != signing.index):
            stopped = STOPPED.format(
                name=signing.name, index=signing.index, user=stop.user, at=format_timestamp(at)
            )
            results.append(stopped)
        if pending is not None:
            if pending.started and (signing is None or signing.index != pending.index):
                results.append(unknown_outcome(pending.name, pending.index, during))
            else:
                results.append(stopped_text(pending, stop.user, at))
                await self._show_stopped(key, entries, pending, stop.user, at)
        start = answer_start(entries, owed[0].index) if owed else len(entries)
        for index in unanswered_calls(entries, start):
            call = entries[index].content
            name = call.called if isinstance(call, ServerToolCall) else "?"
            results.append(unknown_outcome(name, index, during))
        for result in results:
            ensure_lease()
            await self.recorder.record(key, result)

    async def _show_stopped(
        self, key: ThreadKey, entries: list[Entry], pending: Pending, user: str, at: datetime
    ) -> None:
        """The approval's message says who stopped it; no buttons left (a courtesy: the log
        has it)."""
        if pending.message_ts is None:
            return
        call = entries[pending.index].content
        arguments = call.arguments if isinstance(call, ServerToolCall) else {}
        words = ENGLISH
        if self.languages is not None:
            words = (await self.languages.of(self.client, key.team, pending.requester)).words
        text, blocks = outcome_message(pending.name, arguments, user, "stopped", at, words)
        try:
            await self.client.chat_update(
                channel=pending.posted_in or key.channel,
                ts=pending.message_ts,
                text=text,
                blocks=blocks,
            )
        except SLACK_FAILURES as exc:
            log.info("could not mark the approval in %s stopped: %s", key, briefly(exc))

    async def _keep_streams(self, key: ThreadKey, stop: StopRequest, sessions: bool) -> int:
        """Leave the streams as they show now: those Slack stopped, and the others the run
        left open, stopped here (ending the session's work). How many there were."""
        store = self.recorder.store
        streams = await async_store(store).read(store.open_streams, key)
        # Streams Slack stopped whose ts the run never learnt: a start in flight when it was
        # stopped made each. They settle its record: the message stays, as the others do.
        unconfirmed = len(set(stop.streams) - {s.ts for s in streams if s.state == "open"})
        kept = []
        for stream in streams:
            if stream.state == "starting" and unconfirmed:
                unconfirmed -= 1
                kept.append(stream)
                continue
            if stream.state != "open":
                continue  # a start never confirmed, or one owed deletion: as after a crash
            if stream.ts not in stop.streams:
                ensure_lease()
                try:
                    await (self.stream_client or self.client).chat_stopStream(
                        channel=key.channel,
                        ts=stream.ts,
                        session_status=ACTIVE if sessions else None,
                    )
                except SLACK_FAILURES as exc:
                    if briefly(exc) not in GONE:
                        log.warning("could not stop stream %s: %s", stream.ts, briefly(exc))
                        continue  # still open: deleted later, as a stream left over
            kept.append(stream)
        # A finished message from now on, not a stream to clean up.
        await async_store(store).write(store.change_open_streams, key, (), kept)
        return len({s.ts for s in kept if s.state == "open"} | set(stop.streams))


def stop_entry(
    stop: StopRequest, asker: str | None, shown: list[tuple[str, str]], streams: int
) -> str:
    """The system entry of a stop (docs/log-format.md#how-a-run-ends)."""
    when = datetime.fromtimestamp(float(stop.at or 0), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    who = f"<@{stop.user}>"
    text = f"{STOP_PREFIX}{who} pressed stop at {when}"
    if asker is not None and asker != who:
        text += f" (not {asker}, who asked)"
    text += "; the answer stopped there, and the request counts as answered."
    texts = [json.dumps(shown_text, ensure_ascii=False) for _, shown_text in shown if shown_text]
    if texts:
        return f"{text} What it had streamed stays in the thread: {' '.join(texts)}."
    if streams:
        return f"{text} What it had streamed stays in the thread ({streams} message(s))."
    return f"{text} Nothing of it had been shown."
