"""How a run ends when it does not end on its own finishRequest (docs/log-format.md#how-a-run-ends):
the finish rule (a finishRequest with nothing of the answer shown is refused once, then ends
with an apology where someone asked the bot itself), and the endings with an apology: a
model refused, a model or Slack failure, a prompt that cannot fit, the step cap, the
unexpected. Each is one short message in the thread and one `Error:` entry that answers."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Literal

from assistant.i18n.words import Message
from assistant.model.attempts import ModelRefused
from assistant.run.core.lease import ensure_lease
from assistant.run.core.leftovers import NOTICE_METADATA, Undeleted, still_there
from assistant.run.core.recorder import Recorder
from assistant.run.core.run_context import RunContext
from assistant.run.loop.answer_so_far import answer_start, silent_finish
from assistant.run.loop.apologies import SORRY_UNEXPECTED, budget_note, sorry_refused
from assistant.run.tools.post_message import finish_interrupted_streams
from assistant.slack.connection import SLACK_FAILURES, slack_reason
from context.entry import FAILURE_PREFIX, SystemEntry, now_timestamp
from context.spend import BudgetReached, told_before
from context.storage import ModelRefusal

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Endings:
    recorder: Recorder

    async def silent_finish(self, ctx: RunContext) -> Literal["refuse", "end"] | None:
        """What becomes of the run's finishRequest if no post of the answer was shown
        (assistant.run.loop.answer_so_far.silent_finish); None when one was."""
        if ctx.posts.posted:  # most answers: something was posted, no need to read the log
            return None
        entries = await self.recorder.entries(ctx.key, start=ctx.answer_from)
        return silent_finish(entries, answer_start(entries, ctx.answer_from))

    async def refused(self, ctx: RunContext, exc: ModelRefused, seen_through: int) -> None:
        """The model service refused the model asked for: never retried (it would refuse
        again), said in the thread, the log and `assistant channels list` (for a channel's
        model), naming the model."""
        where = f"{ctx.key.team}/{ctx.key.channel}"
        if ctx.model is not None:
            log.warning("%s in %s, the channel's model: a run there cannot answer", exc, where)
            refusal = ModelRefusal(
                ctx.key.team, ctx.key.channel, exc.model, exc.detail, now_timestamp()
            )
            await self.recorder.call(self.recorder.store.refuse_model, refusal)
        else:
            log.warning("%s in %s, ASSISTANT_MODEL: no run can answer", exc, where)
        sorry = sorry_refused(exc.model, exc.detail, ctx.model is not None)
        await self.fail(ctx, f"the model call failed: {exc}", sorry, seen_through)

    async def fail(self, ctx: RunContext, reason: str, message: Message, seen_through: int) -> int:
        """One short message for the people in the thread, in their language; the reason,
        and the message in its source text, for the log (the index of its entry)."""
        outcome = await self._tell(ctx, message)
        entry = await self.recorder.record(
            ctx.key, f"{FAILURE_PREFIX}{reason}. {outcome}", answered_through=seen_through
        )
        assert entry is not None  # only user entries and event ids are ever deduplicated
        return entry.index

    async def _tell(self, ctx: RunContext, message: Message) -> str:
        """`message` posted in the thread (in the steps' message when they are on show);
        the entry's OUTCOME: whether the thread was told."""
        outcome = "No one was told (replay)."
        sorry = message.shown(ctx.words)
        if ctx.client is not None:
            ensure_lease()
            told = None  # the message the thread was told in
            if ctx.cards is not None:  # the steps on show: told in their message, below them
                with contextlib.suppress(*SLACK_FAILURES):
                    told = await ctx.cards.finish_with(sorry, NOTICE_METADATA, [])
                ctx.cards.ts = None  # not stopped: deleted below, with the other open streams
            left = still_there([Undeleted("the thread could not be read")])
            with contextlib.suppress(*SLACK_FAILURES):
                # No stream left half-written; what cannot be deleted yet stays owed.
                left = still_there((await finish_interrupted_streams(ctx, None)).left)
            try:
                if told is None:
                    await ctx.client.chat_postMessage(
                        channel=ctx.key.channel,
                        thread_ts=ctx.key.thread_ts,
                        text=sorry,
                        metadata=NOTICE_METADATA,  # not a half-written stream (stream_leftovers)
                        **ctx.post_as,
                    )
                outcome = f'The user was told: "{message.english()}"'
            except SLACK_FAILURES as exc:
                outcome = "The thread could not be told."
                log.warning("could not tell %s about a failure: %s", ctx.key, slack_reason(exc))
            outcome = f"{outcome} {left}".strip()
        return outcome

    async def budget_reached(
        self, ctx: RunContext, reached: BudgetReached, seen_through: int
    ) -> None:
        """A call that would pass the channel's budget, not made: the thread told once per
        budget and period (docs/operations.md#spend-limits), every refused run recorded."""
        texts = [e.content for e in ctx.log.entries if isinstance(e, SystemEntry)]
        if told_before(texts, reached):
            outcome = "The thread was not told again: it was told earlier in this period."
        else:
            outcome = await self._tell(ctx, budget_note(reached))
        log.info("%s: %s", ctx.key, reached.head)
        await self.recorder.record(
            ctx.key, f"{reached.head}. {outcome}", answered_through=seen_through
        )

    async def fail_unexpectedly(self, ctx: RunContext, exc: Exception) -> None:
        """A failure no part of the run expected (a bug, an answer of a shape no one
        foresaw): the thread is told, the log names it, the traceback goes to the console."""
        log.error("the run in thread %s failed", ctx.key, exc_info=exc)
        reason = f"the run failed unexpectedly ({type(exc).__name__})"
        await self.fail(ctx, reason, SORRY_UNEXPECTED, len(ctx.log) - 1)
