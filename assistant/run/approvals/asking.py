"""A run's side of an approval (docs/slack-features.md#approvals): asking the person who asked
to allow or deny a call, the run stopped while it waits; settling it when the run resumes
(carried out once allowed, a result the model reads once denied or expired); and the calls an
earlier run of the answer left without a result (`unfinished.py`), made again only where that
changes nothing more."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from assistant.run.approvals.entries import (
    NO_ONE_TO_ASK,
    Pending,
    grant_used,
    grant_used_text,
    not_carried_out,
    outcome_message,
    pending_approval,
    request_message,
    requested_text,
    started_text,
)
from assistant.run.approvals.unfinished import unanswered_calls, unknown_outcome
from assistant.run.core.deferral import RunDeferred
from assistant.run.core.lease import RunStopped, ensure_lease
from assistant.run.core.leftovers import NOTICE_METADATA
from assistant.run.core.recorder import Recorder
from assistant.run.core.run_context import RunContext
from assistant.slack.connection import SLACK_FAILURES, slack_reason
from context.storage.async_store import async_store
from context.toolcalls import ServerToolCall

log = logging.getLogger(__name__)


class ApprovalPending(RunDeferred):
    """The run stopped while a tool call waits for a person's approval
    (assistant/run/approvals/entries.py): tried again at the expiry, or at once after a click."""


@dataclass(frozen=True)
class Approvals:
    """A run's approvals. Replays carry nothing out (their context has no Slack client):
    the recorded log's waits and calls are not theirs to end."""

    recorder: Recorder
    seconds: float = 900.0  # ASSISTANT_APPROVAL_SECONDS

    async def ask(self, ctx: RunContext, call: ServerToolCall, index: int) -> str:
        """Ask the person who asked to allow or deny the call, record that it waits, and
        stop the run (ApprovalPending) with its request still owed, deferred to the expiry; a
        click resumes it sooner. Returns a result only when there is no one to ask."""
        if ctx.asker is None or ctx.client is None:
            return NO_ONE_TO_ASK.format(name=call.called, index=index)
        granted = await self._granted(ctx, call, index, ctx.asker)
        if granted is not None:
            return granted
        now = datetime.now(UTC)
        until = now + timedelta(seconds=self.seconds)
        approvers, elsewhere = (
            ctx.toolbox.approval_rule(call) if ctx.toolbox is not None else ("asker", None)
        )
        if elsewhere == ctx.key.channel:
            elsewhere = None  # the ops channel's own threads ask in the thread
        # Deferred before anyone can click: a click's "due now" is never overwritten.
        await self._defer(ctx, until)
        permalink = await self._permalink(ctx) if elsewhere else None
        text, blocks = request_message(
            ctx.key.channel,
            ctx.key.thread_ts,
            index,
            call.called,
            call.arguments,
            ctx.asker,
            until,
            ctx.words,
            approvers,
            permalink,
        )
        ensure_lease()
        if elsewhere is None:
            posted = await ctx.client.chat_postMessage(
                channel=ctx.key.channel,
                thread_ts=ctx.key.thread_ts,
                text=text,
                blocks=blocks,
                metadata=NOTICE_METADATA,
                **ctx.post_as,
            )
        else:
            posted = await ctx.client.chat_postMessage(
                channel=elsewhere,
                text=text,
                blocks=blocks,
                metadata=NOTICE_METADATA,
                **ctx.post_as,
            )
            # The thread is told where its request waits (no buttons here: one decision).
            note = ctx.words.gettext(
                "Waiting for approval of {tool} in <#{channel}>.",
                tool=call.called,
                channel=elsewhere,
            )
            await ctx.client.chat_postMessage(
                channel=ctx.key.channel,
                thread_ts=ctx.key.thread_ts,
                text=note,
                metadata=NOTICE_METADATA,
                **ctx.post_as,
            )
        ts = posted.get("ts")
        asked = requested_text(
            call.called,
            index,
            ctx.asker,
            until,
            ts if isinstance(ts, str) else None,
            call.arguments,
            approvers,
            elsewhere,
        )
        entry = await self.recorder.record(ctx.key, asked)
        if ctx.cards is not None:
            if entry is not None:
                await ctx.cards.note(entry)  # "Waiting for approval", as the run stops
            await ctx.cards.close()
        raise _suspended(until)

    async def settle(self, ctx: RunContext) -> None:
        """A call the log shows waiting for approval: carried out once allowed; a result
        the model reads once denied or expired; else the run waits on."""
        pending = pending_approval(ctx.log.entries)
        if pending is None:
            return
        now = datetime.now(UTC)
        if pending.decision is None and ctx.client is None:
            return  # a replay: the recorded log's wait is not this run's to end
        if pending.decision is None and not pending.expired(now):
            # Waits on (a new message woke the thread); a click between the log's read and
            # the deferral is looked for again after it.
            await self._defer(ctx, pending.until)
            for new in await self.recorder.entries(ctx.key, start=len(ctx.log)):
                ctx.log.add(new)
            pending = pending_approval(ctx.log.entries)
            if pending is None:
                return
            if pending.decision is None:
                raise _suspended(pending.until)
        call = ctx.log.entries[pending.index].content
        result: str | None
        if pending.decision == "allowed" and isinstance(call, ServerToolCall) and ctx.toolbox:
            result = await self._allowed(ctx, pending, call)
        else:
            if pending.decision is None and isinstance(call, ServerToolCall):
                await self._show_expired(ctx, pending, call)
            result = not_carried_out(pending)
        if result is None:
            return
        ensure_lease()
        entry = await self.recorder.record(ctx.key, result)
        if entry is not None:
            ctx.log.add(entry)

    async def settle_unfinished(self, ctx: RunContext, start: int) -> None:
        """Calls of MCP servers' tools an earlier run of this answer (its entries from
        `start` on) recorded and was making when it stopped, with no result
        (assistant/run/approvals/unfinished.py): made again only where that changes nothing
        more; else the outcome is unknown. One that needed an approval not yet asked for (the
        run stopped first) was not made: it is asked now."""
        if ctx.client is None or ctx.toolbox is None:
            return  # a replay: the recorded log's calls are not this run's to settle
        for index in unanswered_calls(ctx.log.entries, start):
            call = ctx.log.entries[index].content
            assert isinstance(call, ServerToolCall)
            result: str | None
            by_grant = grant_used(ctx.log.entries, call.called, index)
            if ctx.toolbox.needs_approval(call) and not by_grant:
                result = await self.ask(ctx, call, index)
            elif by_grant:
                # A grant let it run, and it may have been made: as a click's `Calling …`.
                result = (
                    await ctx.toolbox.approved(call, ctx, index)
                    if ctx.toolbox.may_repeat(call)
                    else unknown_outcome(call.called, index)
                )
            elif ctx.toolbox.may_repeat(call):
                result = await ctx.toolbox.function(call)(call, ctx, index)
            else:
                result = unknown_outcome(call.called, index)
            ensure_lease()
            if result is not None:
                await self.recorder.record(ctx.key, result)
            # Read back rather than added: a grant's entry came before the result.
            for new in await self.recorder.entries(ctx.key, start=len(ctx.log)):
                ctx.log.add(new)

    async def _allowed(self, ctx: RunContext, pending: Pending, call: ServerToolCall) -> str | None:
        """The result of a call a person allowed. Its start is recorded before the request
        leaves: a run that finds it started and without a result (its process stopped during
        the call) makes it again only if the tool's server says that changes nothing more;
        else the outcome is unknown, for the model and the person to decide."""
        assert ctx.toolbox is not None
        replay = ctx.client is None  # carries nothing out: the recorded result stands in
        if pending.started and not replay and not ctx.toolbox.may_repeat(call):
            return unknown_outcome(call.called, pending.index)
        if not replay:
            # A stop pressed since the click: the scheduler records it, and the call is not made.
            store = self.recorder.store
            stop = await async_store(store).read(store.stop_requested, ctx.key)
            if stop is not None:
                raise RunStopped(stop)
        if not pending.started:
            ensure_lease()
            entry = await self.recorder.record(ctx.key, started_text(pending, datetime.now(UTC)))
            if entry is not None:
                ctx.log.add(entry)
        return await ctx.toolbox.approved(call, ctx, pending.index)

    async def _granted(
        self, ctx: RunContext, call: ServerToolCall, index: int, asker: str
    ) -> str | None:
        """The call's result when a grant covers it (docs/slack-features.md#grants): the
        grant that allowed it recorded first, as a click's `Calling …` is, then the call
        made. None when no grant covers it: a person is asked."""
        store = self.recorder.store
        key = ctx.key
        grant = await async_store(store).read(
            store.grant_covering, key.team, key.channel, call.server, call.tool, asker
        )
        if grant is None or ctx.toolbox is None:
            return None
        ensure_lease()
        # Not added to ctx.log: the call's own entry may not be there yet (the step loop
        # reads what was recorded at its next step).
        entry = await self.recorder.record(key, grant_used_text(grant, index, asker))
        if entry is not None and ctx.cards is not None:
            await ctx.cards.note(entry)
        return await ctx.toolbox.approved(call, ctx, index)

    async def _permalink(self, ctx: RunContext) -> str | None:
        """The thread's link (chat.getPermalink), for a request posted elsewhere; None when
        Slack gives none (the request still names the call and who asked)."""
        assert ctx.client is not None
        try:
            answer = await ctx.client.chat_getPermalink(
                channel=ctx.key.channel, message_ts=ctx.key.thread_ts
            )
        except SLACK_FAILURES as exc:
            log.info("no link to %s for its approval: %s", ctx.key, slack_reason(exc))
            return None
        link = answer.get("permalink")
        return link if isinstance(link, str) else None

    async def _defer(self, ctx: RunContext, until: datetime) -> None:
        """Keep the thread owed but not due before `until` (any process's sweep resumes it
        then; a click makes it due at once). Not a Slack outage: no `since`, so a later
        outage's bound starts when it does."""
        store = self.recorder.store
        await async_store(store).write(store.defer, ctx.key, None, until)

    async def _show_expired(self, ctx: RunContext, pending: Pending, call: ServerToolCall) -> None:
        """The buttons' message says the approval expired (a courtesy: the log has it)."""
        if ctx.client is None or pending.message_ts is None:
            return
        text, blocks = outcome_message(
            call.called, call.arguments, pending.requester, "expired", pending.until, ctx.words
        )
        try:
            await ctx.client.chat_update(
                channel=pending.posted_in or ctx.key.channel,
                ts=pending.message_ts,
                text=text,
                blocks=blocks,
            )
        except SLACK_FAILURES as exc:
            log.info("could not mark the approval in %s expired: %s", ctx.key, slack_reason(exc))


def _suspended(until: datetime) -> ApprovalPending:
    wait = max((until - datetime.now(UTC)).total_seconds(), 0.0)
    return ApprovalPending(f"a tool call waits for a person's approval until {until}", wait)
