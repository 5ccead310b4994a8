"""Tool dispatch: one reply's tool calls, each recorded before it is carried out (a crash in
between leaves the intent on record), then carried out by its tool (or asked of a person
first), its result recorded; the reply's calls past its cap counted in one entry."""

from __future__ import annotations

from dataclasses import dataclass, field

from assistant.model.attempts import timed_out_note
from assistant.model.completion import ModelReply, RawToolCall
from assistant.model.tool_calls import TOOL_SCHEMAS, ToolCallError, parse_tool_call, tool_names
from assistant.run.approvals.asking import Approvals
from assistant.run.core.recorder import Recorder
from assistant.run.core.run_context import RunContext, ToolFunction
from assistant.run.loop.answer_so_far import NO_ANSWER, NOT_FINISHED
from assistant.run.loop.apologies import SORRY_NO_ANSWER
from assistant.run.loop.endings import Endings
from assistant.run.streaming.post import PostStream
from assistant.run.streaming.step import usage_of
from assistant.run.tools.expand_entry import expand_entry
from assistant.run.tools.finish_request import finish_request
from assistant.run.tools.forget_for_channel import forget_for_channel
from assistant.run.tools.get_thread_history import get_thread_history
from assistant.run.tools.post_message import arrived_meanwhile, post_message
from assistant.run.tools.remember_for_channel import remember_for_channel
from assistant.run.tools.schedule_routine import schedule_routine
from assistant.run.tools.search_slack import search_slack
from context.entry import FAILURE_PREFIX
from context.spend import Settlement
from context.storage import EntryMeta
from context.toolcalls import FinishRequest, PostMessage, ServerToolCall, ToolCall

SLACK_TOOLS: dict[str, ToolFunction] = {
    "postMessage": post_message,
    "getThreadHistory": get_thread_history,
    "expandEntry": expand_entry,
    "finishRequest": finish_request,
    "searchSlack": search_slack,
    "rememberForChannel": remember_for_channel,
    "forgetForChannel": forget_for_channel,
    "scheduleRoutine": schedule_routine,
}


@dataclass(frozen=True)
class Dispatch:
    recorder: Recorder
    endings: Endings
    approvals: Approvals
    tools: dict[str, ToolFunction] = field(default_factory=lambda: dict(SLACK_TOOLS))

    async def carry_out(self, ctx: RunContext, reply: ModelReply, seen_through: int) -> bool:
        """Record and carry out one reply's tool calls; True once the request is finished
        (its finishRequest also records that the entries through `seen_through` are answered)."""
        ctx.posts.new_reply()
        meta: EntryMeta | None = usage_of(reply)
        if reply.timeouts:
            await self.recorder.record(ctx.key, timed_out_note(reply.timeouts, reply.timeout))
        if not reply.calls:
            await self.recorder.record(
                ctx.key,
                "The model answered in plain text instead of calling a tool; "
                "the text was posted with postMessage and the request finished.",
                meta=meta,
                settle=_settlement(ctx, meta),
            )
            text = (reply.text or "").strip() or "…"
            await self.call(ctx, PostMessage(text=text), None, seen_through)
            await self.call(ctx, FinishRequest(), None, seen_through)
            return True
        for raw in reply.calls:
            finished, _ = await self.one_call(ctx, raw, meta, seen_through)
            if finished:
                return True
            meta = None  # usage belongs to the first entry a reply produced
        await self.record_skipped(ctx)
        return False

    async def record_skipped(self, ctx: RunContext) -> None:
        """The one entry for the reply's calls past ASSISTANT_MAX_TOOL_CALLS_PER_REPLY, if
        any: how many, of which tools."""
        note = ctx.posts.skipped_note()
        if note is not None:
            await self.recorder.record(ctx.key, note)

    async def one_call(
        self,
        ctx: RunContext,
        raw: RawToolCall,
        meta: EntryMeta | None,
        seen_through: int,
        stream: PostStream | None = None,
    ) -> tuple[bool, int | None]:
        """Record and carry out one tool call as the model made it: (whether it finished
        the request, the index of its entry; None when it has none)."""
        if ctx.posts.call_refusal() is not None and raw.name != "finishRequest":
            # Past the reply's cap: not recorded one by one (a reply of hundreds of calls
            # would flood the next prompt); one entry says how many, as the reply ends.
            if stream is not None:
                await stream.discard()
            offered = tool_names(ctx.toolbox.schemas if ctx.toolbox is not None else TOOL_SCHEMAS)
            ctx.posts.skip(raw.name if raw.name in offered else "of no tool offered")
            return False, None
        try:
            if ctx.toolbox is not None:
                call = ctx.toolbox.parse(raw.name, raw.arguments)
            else:
                call = parse_tool_call(raw.name, raw.arguments)
        except ToolCallError as exc:
            if stream is not None:
                await stream.discard()
            entry = await self.recorder.record(
                ctx.key, f"Error: {exc}", meta=meta, settle=_settlement(ctx, meta)
            )
            assert entry is not None
            return False, entry.index
        finished = isinstance(call, FinishRequest)
        silent = await self.endings.silent_finish(ctx) if finished else None
        if silent == "refuse":
            entry = await self.recorder.record(
                ctx.key, NOT_FINISHED, meta=meta, settle=_settlement(ctx, meta)
            )
            assert entry is not None
            return False, entry.index
        if finished:
            await self.record_skipped(ctx)  # before the entry that ends the run
        if silent == "end" and ctx.addressed:
            # Someone who asked the bot itself is never left with silence: the apology.
            return True, await self.endings.fail(ctx, NO_ANSWER, SORRY_NO_ANSWER, seen_through)
        index = await self.call(ctx, call, meta, seen_through, stream)
        return finished, index

    async def call(
        self,
        ctx: RunContext,
        call: ToolCall,
        meta: EntryMeta | None,
        seen_through: int,
        stream: PostStream | None = None,
    ) -> int:
        """`seen_through`: the last entry the model's prompt held (a finishRequest answers
        through it)."""
        # Recorded before it is carried out: a crash in between leaves the intent on record.
        answered_through = seen_through if isinstance(call, FinishRequest) else None
        entry = await self.recorder.record(
            ctx.key,
            call,
            meta=meta,
            answered_through=answered_through,
            settle=_settlement(ctx, meta),
        )
        assert entry is not None  # only user entries and event ids are ever deduplicated
        if ctx.cards is not None:
            await ctx.cards.note(entry)
        if isinstance(call, ServerToolCall) and ctx.toolbox and ctx.toolbox.needs_approval(call):
            result: str | None = await self.approvals.ask(ctx, call, entry.index)
        elif stream is not None and isinstance(call, PostMessage):
            result = await post_message(call, ctx, entry.index, stream)
        else:
            tool = ctx.toolbox.function(call) if ctx.toolbox else self.tools[call.called]
            result = await tool(call, ctx, entry.index)
        if isinstance(call, PostMessage) and not (result or "").startswith(FAILURE_PREFIX):
            # Posted: say which messages it could not have read (the log's order alone
            # would show them answered).
            note = await arrived_meanwhile(ctx, self.recorder, seen_through, entry.index)
            result = " ".join(filter(None, [note, result])) or None
        if result is not None:
            done = await self.recorder.record(ctx.key, result)
            if ctx.cards is not None and done is not None:
                await ctx.cards.note(done)
        if ctx.cards is not None and isinstance(call, PostMessage | FinishRequest):
            await ctx.cards.close()  # the cards no post took stand above what comes next
        return entry.index


def _settlement(ctx: RunContext, meta: EntryMeta | None) -> Settlement | None:
    """The call's hold, counted in the write of the entry that carries its usage."""
    return ctx.call_hold.take(meta)
