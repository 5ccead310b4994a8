"""The step loop (docs/architecture.md#the-agent-loop): up to the step cap, the entries
recorded since the last step picked up, the prompt built within its budget (and the server's
window), the model called, its reply handed to tool dispatch (streamed: each call as soon as
it is complete); until finishRequest, or an ending."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from assistant.model.attempts import ContextTooLong, ImagesRefused, ModelError, ModelRefused
from assistant.model.completion import ModelReply
from assistant.model.limits import ModelLimits, ServerWindow
from assistant.model.request import ImagePart
from assistant.model.stream import ReplyEnded, StepEvent
from assistant.model.tool_calls import TOOL_SCHEMAS, Tools
from assistant.run.core.prompt import PromptBudget, RunPrompts, WindowTooSmall
from assistant.run.core.recorder import Recorder
from assistant.run.core.run_context import RunContext
from assistant.run.core.spend import Spending
from assistant.run.loop.apologies import SORRY_BUDGET, SORRY_MODEL, SORRY_STEPS, SORRY_WINDOW
from assistant.run.loop.dispatch import Dispatch
from assistant.run.loop.endings import Endings
from assistant.run.loop.images import ImageParts
from assistant.run.streaming.step import streamed_step
from assistant.run.streaming.streams import SlackStreaming
from context.budget import BudgetError
from context.spend import BudgetReached

log = logging.getLogger(__name__)

# Not an `Error:` entry: the run goes on (those end it).
IMAGES_REFUSED = (
    "The model {model!r} refused the thread's images ({why}); it is asked without images "
    "from now on, and knows them only as the log describes them."
)


class StepModel(Protocol):
    """What a run needs of its model: assistant.model.client.ModelClient, or a stand-in for
    it (bench/timed_agent.py's), which mypy checks against this, so neither drifts unseen."""

    @property
    def where(self) -> str:
        """Where the model's server is, as the log names it."""
        ...

    @property
    def limits(self) -> ModelLimits: ...

    async def window(self, model: str | None) -> ServerWindow | None: ...

    async def next_step(
        self,
        prompt_text: str,
        images: Sequence[ImagePart] = (),
        model: str | None = None,
        tools: Tools = TOOL_SCHEMAS,
        estimate: int | None = None,
    ) -> ModelReply: ...

    def stream_step(
        self,
        prompt_text: str,
        images: Sequence[ImagePart] = (),
        model: str | None = None,
        tools: Tools = TOOL_SCHEMAS,
        estimate: int | None = None,
    ) -> AsyncIterator[StepEvent]: ...


@dataclass(frozen=True, kw_only=True)
class StepLoop:
    recorder: Recorder
    model: StepModel
    max_steps: int
    budget: PromptBudget
    dispatch: Dispatch
    endings: Endings
    images: ImageParts | None = None  # None: the prompt carries image markers only (replay)
    streaming: SlackStreaming | None = None  # None: texts are posted whole (ASSISTANT_STREAM)
    # The spend limits every call is held to (docs/operations.md#spend-limits); None: none
    # (a replay, a benchmark).
    spending: Spending | None = None

    async def steps(self, ctx: RunContext, taken: int = 0) -> None:
        """`taken`: the steps earlier runs of the same answer took."""
        try:
            budget = self._budget(ctx)
        except BudgetError as exc:
            reason = f"the prompt does not fit the context budget: {exc}"
            await self.endings.fail(ctx, reason, SORRY_BUDGET, len(ctx.log) - 1)
            return
        prompts = budget.prompts(ctx.log)
        images: list[ImagePart] = []
        images_through = -1  # the log's last index when `images` were chosen
        served = False  # whether a call with the channel's model succeeded in this run
        seen_through = len(ctx.log) - 1
        for _ in range(max(self.max_steps - taken, 0)):
            # Pick up what was recorded since the last step: our own entries, new messages.
            for entry in await self.recorder.entries(ctx.key, start=len(ctx.log)):
                ctx.log.add(entry)
            seen_through = len(ctx.log) - 1
            # Images come only with people's messages: chosen again only after a new one.
            if self.images is not None and any(
                entry.role == "user" for entry in ctx.log.entries[images_through + 1 :]
            ):
                images, images_through = await self.images.parts(ctx.key), seen_through
            try:
                # The window the server names (read at the first step) and how it counts
                # tokens (learned from each call's usage): the prompt narrowed to them.
                prompts.narrow(budget.within(await self.model.window(ctx.model)))
                finished = await self._within_limits(ctx, budget, prompts, images, seen_through)
            except WindowTooSmall as exc:
                reason = f"the prompt does not fit the context budget: {exc}"
                await self.endings.fail(ctx, reason, SORRY_WINDOW, seen_through)
                return
            except BudgetError as exc:
                reason = f"the prompt does not fit the context budget: {exc}"
                await self.endings.fail(ctx, reason, SORRY_BUDGET, seen_through)
                return
            except ModelRefused as exc:
                await self.endings.refused(ctx, exc, seen_through)
                return
            except _OverBudget as exc:
                await self.endings.budget_reached(ctx, exc.reached, seen_through)
                return
            except ModelError as exc:
                # The console's trace shows the Error entry; stderr says which server failed
                # and why, for whoever runs the process.
                why = f" ({exc.reason})" if exc.reason else ""
                log.warning(
                    "the model server at %s failed a run in %s: %s%s",
                    self.model.where,
                    ctx.key,
                    exc,
                    why,
                )
                reason = f"the model call failed: {exc}"
                await self.endings.fail(ctx, reason, SORRY_MODEL, seen_through)
                return
            if ctx.model is not None and not served:
                # A refusal of the channel's model kept in the store is no longer true.
                await self.recorder.call(
                    self.recorder.store.model_served, ctx.key.team, ctx.key.channel, ctx.model
                )
                served = True
            if finished:
                return
        reason = f"stopped after {self.max_steps} steps without finishRequest"
        await self.endings.fail(ctx, reason, SORRY_STEPS, seen_through)

    async def _within_limits(
        self,
        ctx: RunContext,
        budget: PromptBudget,
        prompts: RunPrompts,
        images: list[ImagePart],
        seen_through: int,
    ) -> bool:
        """One step's call, asked again once if the server refused the prompt as longer than
        its window (cut to the window it named, remembered for the model), and once if it
        refused the images (without them; the log says so)."""
        prompt, retried = prompts.next(), set()
        while True:
            ctx.shown.show(prompt, seen_through)
            try:
                estimate = prompt.tokens + budget.fixed  # what the server counts as ours
                return await self._held(ctx, prompt.text, images, seen_through, estimate)
            except (ContextTooLong, ImagesRefused) as exc:
                if type(exc) in retried:
                    raise
                retried.add(type(exc))
                if isinstance(exc, ImagesRefused):
                    images = []
                    why = str(exc).removeprefix("the model service ")
                    note = IMAGES_REFUSED.format(model=exc.model, why=why)
                    await self.recorder.record(ctx.key, note)
                    continue
                window = budget.server_window(exc.window, exc.prompt_tokens, prompt)
                self.model.limits.remember_window(exc.model, window)
                log.warning(
                    "the model server at %s named a context window of %d tokens for %r; "
                    "the prompt in %s is cut to it",
                    self.model.where,
                    exc.window,
                    exc.model,
                    ctx.key,
                )
                prompts.narrow(budget.within(self.model.limits.window(exc.model)))
                prompt = prompts.next()

    def _budget(self, ctx: RunContext) -> PromptBudget:
        """The prompt's budget, less what the run's tools beyond the built-ins (searchSlack,
        its MCP servers') add to every call."""
        extra = ctx.toolbox.extra_schemas if ctx.toolbox is not None else []
        return self.budget.with_tools(extra)

    async def _held(
        self,
        ctx: RunContext,
        prompt_text: str,
        images: list[ImagePart],
        seen_through: int,
        estimate: int,
    ) -> bool:
        """The one place a run's model call is held to the channel's budgets: its worst case
        (the prompt as counted, the answer at its cap) reserved before, its usage counted
        after; a call that would pass a budget is not made."""
        spending, limits = self.spending, ctx.limits
        if spending is None or limits is None or not limits.any:
            return await self._ask(ctx, prompt_text, images, seen_through, estimate)
        team, channel = ctx.key.team, ctx.key.channel
        held = await spending.reserve(
            team, channel, limits, ctx.model, estimate, self.budget.answer
        )
        if isinstance(held, BudgetReached):
            raise _OverBudget(held)
        if held is None:  # no budget in the unit of this model
            return await self._ask(ctx, prompt_text, images, seen_through, estimate)
        replies: list[ModelReply] = []
        failed: BaseException | None = None
        # Counted by the write that records the call's usage (one transaction, not two: the
        # budget check's CPU goal, bench/budgets.py); on its own below when none did.
        ctx.call_hold.start(spending, held)
        try:
            return await self._ask(ctx, prompt_text, images, seen_through, estimate, replies)
        except BaseException as exc:
            failed = exc
            raise
        finally:
            taken = ctx.call_hold.end()
            await spending.settle(
                held,
                replies[-1] if replies else None,
                failed,
                limits,
                team,
                channel,
                taken,
            )

    async def _ask(
        self,
        ctx: RunContext,
        prompt_text: str,
        images: list[ImagePart],
        seen_through: int,
        estimate: int,
        replies: list[ModelReply] | None = None,
    ) -> bool:
        """One step's call, its reply carried out; True once the request is finished.
        `estimate`: the request's tokens by the budget's counter; `replies`: where the reply
        is kept (for its usage), when given."""
        tools = ctx.toolbox.schemas if ctx.toolbox is not None else TOOL_SCHEMAS
        if self.streaming is not None and ctx.client is not None:
            try:
                finished = await streamed_step(
                    _kept(
                        self.model.stream_step(prompt_text, images, ctx.model, tools, estimate),
                        replies,
                    ),
                    self.streaming,
                    ctx,
                    seen_through,
                    self.dispatch.one_call,
                    self.dispatch.carry_out,
                )
            except ModelError:
                # The calls of the reply before it broke off.
                await self.dispatch.record_skipped(ctx)
                raise
            await self.dispatch.record_skipped(ctx)
            return finished
        reply = await self.model.next_step(prompt_text, images, ctx.model, tools, estimate)
        if replies is not None:
            replies.append(reply)
        return await self.dispatch.carry_out(ctx, reply, seen_through)


class _OverBudget(Exception):
    def __init__(self, reached: BudgetReached) -> None:
        self.reached = reached


async def _kept(
    events: AsyncIterator[StepEvent], replies: list[ModelReply] | None
) -> AsyncIterator[StepEvent]:
    """A streamed step's events as they come, its whole reply kept in `replies`."""
    try:
        async for event in events:
            if replies is not None and isinstance(event, ReplyEnded):
                replies.append(event.reply)
            yield event
    finally:
        # Left early (a failure, a stop): the model's stream is closed now, as it would be
        # without this wrapper, not whenever the collector finds it.
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
