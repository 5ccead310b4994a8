"""Live answers judged: a share of the answers posted, scored by a judge with the rubric of
`assistant eval`'s judge (`assistant/model/judging.py`, `LIVE_RUBRIC`), after the run that
posted them has ended (docs/evaluation.md, "Watching live quality").

- Never before the post, never delaying it: the scheduler's run function is wrapped
  (`LiveJudge.after`), and only once the run has returned is a task started, in a context of
  its own (no run's telemetry or lease is seen from it). Only posts Slack confirmed (their
  `slack_ts` recorded) are judged.
- Sampled deterministically (`sampled`): a hash of the thread and the post's index against
  the share, so the same answer is in or out of the sample in every process and after a
  restart. Claimed in the store before the judge is asked (`VerdictStore.claim_judging`):
  judged at most once.
- Its verdict is a side record of the thread (`judged_answers`), never an entry of the log: the
  next prompt does not read it. A failure is one log line (and a verdict of None with its
  reason), never a word in the thread.
- Its call counts in `assistant usage` (`judge_calls`) from the figures kept with the verdict,
  and in the channel's spend limits as any model call does (docs/operations.md#spend-limits):
  held before it is asked, its usage counted after; a channel whose budget it would pass is
  not judged (one log line).
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import ValidationError

from assistant.model.attempts import ModelError
from assistant.model.client import ModelClient
from assistant.model.completion import ModelReply
from assistant.model.judging import LIVE_RUBRIC, LiveJudgement
from assistant.run.channels.channel_rules import Channels
from assistant.run.core.requests import AnswerRequest
from assistant.run.core.spend import Spending
from assistant.run.scheduling.scheduler import RunFunction
from context.entry import AssistantEntry, Entry, UserEntry
from context.spend import BudgetReached
from context.storage import EntryMeta, JudgeCall, Store, ThreadKey
from context.storage.async_store import async_store
from context.tokens import counter_for
from context.toolcalls import PostMessage

log = logging.getLogger(__name__)

_SCALE = 2**64


def sampled(key: ThreadKey, index: int, share: float) -> bool:
    """Whether the answer at `index` of the thread is in a sample of `share` (0 to 1): the
    same answer, the same decision, in any process."""
    if share <= 0:
        return False
    if share >= 1:
        return True
    digest = hashlib.sha256(f"{key}@{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / _SCALE < share


@dataclass(frozen=True)
class Verdict:
    """What the judge said of one answer, told to the observer (telemetry's event)."""

    key: ThreadKey
    answer: int
    model: str | None  # the model that answered
    judge_model: str
    verdict: str | None  # None: no verdict (`reason` says why)
    reason: str
    trace_context: str | None  # the post's span (telemetry), if it was traced


# Told of each verdict (telemetry: an event on the answer's trace).
VerdictObserver = Callable[[Verdict], None]


class LiveJudge:
    """Judges a sample of the answers each run posted, after the run."""

    def __init__(
        self,
        store: Store,
        model: ModelClient,
        share: float,
        judge_model: str | None,
        observer: VerdictObserver | None = None,
        spending: Spending | None = None,
        channels: Channels | None = None,
    ) -> None:
        self._store, self._model, self._share = store, model, share
        self._judge_model = judge_model
        self.observer = observer
        # The channel's spend limits the judge's calls count in (None: not counted there).
        self._spending, self._channels = spending, channels
        self._tasks: set[asyncio.Task[None]] = set()

    def after(self, run: RunFunction) -> RunFunction:
        """`run`, then (in the background, once it has returned or failed, not when it was
        cancelled) the judging of what it posted."""

        async def judged(key: ThreadKey, requests: list[AnswerRequest]) -> None:
            cancelled = False
            try:
                await run(key, requests)
            except asyncio.CancelledError:
                cancelled = True
                raise
            finally:
                if not cancelled and requests:
                    self._start(key, min(request.index for request in requests))

        return judged

    def _start(self, key: ThreadKey, since: int) -> None:
        # A context of its own: the run's context variables (its telemetry span, its lease)
        # are over, and the judge is no step of the run.
        task = asyncio.get_running_loop().create_task(
            self._judge_run(key, since), context=contextvars.Context()
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait(self) -> None:
        """Until the judging started so far has ended (tests; a clean stop)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _judge_run(self, key: ThreadKey, since: int) -> None:
        try:
            store = async_store(self._store)
            entries = await store.read(self._store.entries, key)
            metas = await store.read(self._store.metadata, key, since)
            for entry in entries[since:]:
                meta = metas[entry.index - since] if entry.index - since < len(metas) else None
                if not _posted(entry, meta) or not sampled(key, entry.index, self._share):
                    continue
                await self._judge(key, entries, entry, metas, since)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never the thread's: one line
            log.warning("live judge: %s: could not judge: %s", key, _said(exc))

    async def _judge(
        self,
        key: ThreadKey,
        entries: list[Entry],
        post: Entry,
        metas: list[EntryMeta],
        since: int,
    ) -> None:
        answering = _model_of(metas, post.index - since)
        judge_model = self._judge_model or answering or self._model.asked(None)
        store = async_store(self._store)
        claimed = await store.write(
            self._store.claim_judging, key, post.index, answering, judge_model
        )
        if not claimed:
            return  # judged already (or being judged): at most once
        assert isinstance(post.content, PostMessage)
        asked = json.dumps(
            {"question": _question(entries, post.index), "ANSWER": post.content.text},
            ensure_ascii=False,
        )
        judged = await self._within_budget(key, asked, judge_model)
        if judged.verdict is None:
            log.warning("live judge: %s@%d: %s", key, post.index, judged.reason)
        await store.write(self._store.record_verdict, key, post.index, judged)
        if self.observer is not None:
            trace = await store.read(self._store.trace_context, key, post.index)
            self.observer(
                Verdict(
                    key, post.index, answering, judge_model, judged.verdict, judged.reason, trace
                )
            )

    async def _within_budget(self, key: ThreadKey, asked: str, judge_model: str) -> JudgeCall:
        """The judge asked, its call held to the channel's spend limits as a run's are."""
        spending, channels = self._spending, self._channels
        limits = None
        if spending is not None and channels is not None:
            limits = (await channels.rules(key.team, key.channel)).limits
        if spending is None or limits is None or not limits.any:
            return await self._ask(asked, judge_model)
        counter = counter_for(judge_model)
        prompt = counter.count(LIVE_RUBRIC) + counter.count(asked)
        cap = self._model.answer_cap(judge_model)
        held = await spending.reserve(key.team, key.channel, limits, judge_model, prompt, cap)
        if isinstance(held, BudgetReached):
            return JudgeCall(
                None, f"not judged: the channel's {held.period.kind} budget is reached"
            )
        reply: ModelReply | None = None
        failed: BaseException | None = None
        try:
            judged, reply = await self._asked(asked, judge_model)
            return judged
        except BaseException as exc:
            failed = exc
            raise
        finally:
            if held is not None:
                # Quiet: the 80% notice is the runs' to send (their DM needs the workspace).
                await spending.settle(
                    held, reply, failed, limits, key.team, key.channel, quiet=True
                )

    async def _ask(self, asked: str, judge_model: str) -> JudgeCall:
        return (await self._asked(asked, judge_model))[0]

    async def _asked(self, asked: str, judge_model: str) -> tuple[JudgeCall, ModelReply | None]:
        try:
            reply = await self._model.ask_json(LIVE_RUBRIC, asked, judge_model)
        except ModelError as exc:
            return JudgeCall(None, f"the judge could not be asked: {_said(exc)}"), None
        try:
            judgement = LiveJudgement.model_validate_json(reply.text or "")
            verdict, reason = judgement.verdict, judgement.reason
        except ValidationError:
            shown = (reply.text or "nothing")[:200]
            verdict, reason = None, f"the judge's answer is not a verdict: {shown!r}"
        called = JudgeCall(
            verdict,
            reason,
            reply.latency_ms,
            reply.prompt_tokens,
            reply.cached_tokens,
            reply.completion_tokens,
        )
        return called, reply


def _posted(entry: Entry, meta: EntryMeta | None) -> bool:
    """A post Slack confirmed (its message's ts recorded)."""
    return (
        isinstance(entry, AssistantEntry)
        and isinstance(entry.content, PostMessage)
        and meta is not None
        and meta.slack_ts is not None
    )


def _model_of(metas: list[EntryMeta], at: int) -> str | None:
    """The model of the reply the entry at `at` is part of: a reply's figures are on its first
    entry."""
    for meta in reversed(metas[: at + 1]):
        if meta.model is not None:
            return meta.model
    return None


def _question(entries: list[Entry], before: int) -> str:
    """The newest person's message before the post: what it answers."""
    for entry in reversed(entries[:before]):
        if isinstance(entry, UserEntry):
            return entry.content.text
    return ""


def _said(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__
