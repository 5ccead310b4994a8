"""The agent loop (docs/architecture.md#the-agent-loop): build the prompt from the log, call the
model, record each tool call, carry it out, record its result; until finishRequest or the step cap.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal, Protocol

from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import ENGLISH, Message
from assistant.model.attempts import ContextTooLong, ImagesRefused, ModelError, ModelRefused
from assistant.model.completion import ModelReply, RawToolCall
from assistant.model.limits import ModelLimits, ServerWindow
from assistant.model.request import ImagePart
from assistant.model.stream import StepEvent
from assistant.model.tool_calls import (
    TOOL_SCHEMAS,
    ToolCallError,
    Tools,
    parse_tool_call,
)
from assistant.run.loop.answer_so_far import (
    NO_ANSWER,
    NOT_FINISHED,
    answer_start,
    count_so_far,
    silent_finish,
)
from assistant.run.loop.apologies import (
    SORRY_BUDGET,
    SORRY_MODEL,
    SORRY_NO_ANSWER,
    SORRY_SLACK,
    SORRY_STEPS,
    SORRY_UNEXPECTED,
    sorry_refused,
)
from assistant.run.loop.channel_access import ChannelAccess
from assistant.run.loop.channel_rules import ChannelRules, Channels
from assistant.run.loop.images import ImageParts
from assistant.run.loop.languages import LOCALE_LINE, Languages
from assistant.run.loop.post_limits import PostCaps, PostLimits
from assistant.run.loop.prompt import PromptBudget, RunPrompts
from assistant.run.loop.recorder import Recorder
from assistant.run.progress.indicators import Progress
from assistant.run.progress.panel_status import PanelStatus
from assistant.run.progress.sessions import AgentSessions, initiator, session_title
from assistant.run.scheduling.deferral import RESTARTED, ApprovalPending, RunDeferred
from assistant.run.scheduling.lease import LeaseLost, ensure_lease
from assistant.run.scheduling.scheduler import AnswerRequest
from assistant.run.scheduling.slack_outage import SlackOutages
from assistant.run.scheduling.store_errors import store_unavailable
from assistant.run.streaming.leftovers import NOTICE_METADATA, Undeleted, still_there
from assistant.run.streaming.post import PostStream
from assistant.run.streaming.step import streamed_step, usage_of
from assistant.run.streaming.streams import SlackStreaming
from assistant.run.tools.approvals import (
    NO_ONE_TO_ASK,
    Pending,
    not_carried_out,
    outcome_message,
    pending_approval,
    request_message,
    requested_text,
)
from assistant.run.tools.expand_entry import expand_entry
from assistant.run.tools.finish_request import finish_request
from assistant.run.tools.get_thread_history import get_thread_history
from assistant.run.tools.post_message import (
    arrived_meanwhile,
    finish_interrupted_posts,
    finish_interrupted_streams,
    post_message,
)
from assistant.run.tools.run_context import RunContext, ToolFunction
from assistant.run.tools.search_slack import search_slack
from assistant.run.tools.server_tools import ServerCaps
from assistant.run.tools.toolbox import Toolbox, toolbox
from assistant.slack.bot_identity import bot_user_of
from assistant.slack.connection import SLACK_FAILED, SLACK_FAILURES, slack_reason
from assistant.slack.history import ThreadHistory
from context.budget import BudgetError
from context.entry import FAILURE_PREFIX, SystemEntry, UserEntry, now_timestamp
from context.log import ContextLog
from context.storage import EntryMeta, ModelRefusal, ThreadKey
from context.storage.async_store import async_store
from context.toolcalls import FinishRequest, PostMessage, ServerToolCall, ToolCall

# The MCP SDK is imported only where ASSISTANT_MCP_FILE names servers (assistant.app).
if TYPE_CHECKING:
    from assistant.mcp.servers import McpServers

log = logging.getLogger(__name__)


NO_ONE_ALLOWED = (
    "Not answered: the channel's settings do not list the people this run would answer, "
    "as Slack said once it could be asked."
)
NOT_CARRIED_OUT = "Error: the {name} of entry {index} was not carried out: {why}."
# Not an `Error:` entry: the run goes on (those end it).
IMAGES_REFUSED = (
    "The model {model!r} refused the thread's images ({why}); it is asked without images "
    "from now on, and knows them only as the log describes them."
)

SLACK_TOOLS: dict[str, ToolFunction] = {
    "postMessage": post_message,
    "getThreadHistory": get_thread_history,
    "expandEntry": expand_entry,
    "finishRequest": finish_request,
    "searchSlack": search_slack,
}


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


@dataclass(frozen=True)
class Agent:
    recorder: Recorder
    model: StepModel
    client: AsyncWebClient | None
    history: ThreadHistory | None
    max_steps: int
    budget: PromptBudget
    tools: dict[str, ToolFunction] = field(default_factory=lambda: dict(SLACK_TOOLS))
    images: ImageParts | None = None  # None: the prompt carries image markers only (replay)
    post_caps: PostCaps = field(default_factory=PostCaps)
    panel_status: PanelStatus | None = None  # None: no Slack status (replay)
    streaming: SlackStreaming | None = None  # None: texts are posted whole (ASSISTANT_STREAM)
    outages: SlackOutages | None = None  # None: a Slack error ends the run at once
    channels: Channels | None = None  # None: ASSISTANT_MODEL, posts as the app (replay)
    sessions: AgentSessions | None = None  # None: no agent sessions (replay)
    access: ChannelAccess | None = None  # None: who asked is not checked again (replay)
    languages: Languages | None = None  # None: English, no one asked (replay)
    mcp: McpServers | None = None  # None: no MCP servers (no ASSISTANT_MCP_FILE, or a replay)
    mcp_caps: ServerCaps = field(default_factory=ServerCaps)
    # A replay's tools, the servers' it recorded among them (None: built from `mcp`).
    fixed_tools: Toolbox | None = None
    approval_seconds: float = 900.0  # ASSISTANT_APPROVAL_SECONDS

    async def run(self, key: ThreadKey, requests: list[AnswerRequest]) -> None:
        """Answer the requests; the run's last entry records that they are answered."""
        context_log = ContextLog(await self.recorder.entries(key))
        progress = Progress(
            self.client, key, requests[-1].message_ts, self.sessions, self.panel_status,
            session_title(context_log), initiator(context_log),
        )  # fmt: skip
        await progress.start()  # before any other Slack call: the session shows the stop button
        try:
            bot_user_id = next((r.bot_user_id for r in reversed(requests) if r.bot_user_id), None)
            if bot_user_id is None and self.client is not None:
                bot_user_id = await bot_user_of(self.client)  # a run resumed after a restart
            rules = await self.channels.rules(key.team, key.channel) if self.channels else None
            spoken = None
            asker = _asker(context_log, requests)
            if self.languages is not None:  # the words of the person the run answers last
                spoken = await self.languages.of(self.client, key.team, asker, rules)
                await self._tell_locale(key, context_log, asker, spoken.line(asker or ""))
            search = rules.search if rules else None
            ctx = RunContext(
                key, self.client, self.history, f"<@{bot_user_id or 'assistant'}>", context_log,
                self.recorder.store, PostLimits(self.post_caps), recorder=self.recorder,
                model=rules.model if rules else None, post_as=rules.post_as if rules else {},
                in_session=progress.in_session,
                words=spoken.words if spoken is not None else ENGLISH,
                search=search, asker=asker, answer_from=requests[0].index,
                addressed=any(r.addressed for r in requests),
            )  # fmt: skip
            # The channel's settings choose its servers (None: all) and whether it may search.
            box = self.fixed_tools or await toolbox(
                self.tools, self.mcp, rules.tool_servers if rules else None, self.mcp_caps,
                search=search is not None,
            )  # fmt: skip
            ctx = replace(ctx, toolbox=box)
            if self.streaming is not None:  # the steps shown as task cards while it streams
                ctx = replace(ctx, cards=self.streaming.cards(ctx, requests[0].index))
            try:
                await self._answer(ctx, requests, rules)
            except ApprovalPending:
                progress.suspended = True  # the session shows it waits for a person
                raise
        finally:
            await progress.end()

    async def _tell_locale(
        self, key: ThreadKey, context_log: ContextLog, asker: str | None, line: str | None
    ) -> None:
        """The model is told a person's Slack language once per thread, and again when it
        changes (docs/log-format.md, "People's languages"): before what it answers."""
        if asker is None or line is None:
            return
        prefix = LOCALE_LINE.split(";", 1)[0].format(user=asker, locale="")
        told = [
            e.content for e in context_log.entries
            if isinstance(e, SystemEntry) and e.content.startswith(prefix)
        ]  # fmt: skip
        if told and told[-1] == line:
            return
        ensure_lease()
        entry = await self.recorder.record(key, line)
        if entry is not None:
            context_log.add(entry)

    async def _answer(
        self, ctx: RunContext, requests: list[AnswerRequest], rules: ChannelRules | None
    ) -> None:
        key = ctx.key
        try:
            if not await self._admitted(ctx, requests, rules):
                return
            # The caps and the step cap bound the answer, not this process: count what the
            # runs before this one (killed, or stopped by a lost lease) did for it.
            steps_taken = await count_so_far(ctx, requests[0].index)
            if self.client is not None:
                why = await self.outages.resumed(key) if self.outages else RESTARTED
                await finish_interrupted_streams(ctx, self.recorder, why)
                await finish_interrupted_posts(ctx, self.recorder, requests[0].index, why)
            await self._settle_approval(ctx)
            await self._steps(ctx, steps_taken)
            if ctx.cards is not None:
                await ctx.cards.close()
        except SLACK_FAILURES as exc:
            reason = f"{SLACK_FAILED}{slack_reason(exc)}"
            if self.outages is not None:  # raises RunDeferred while Slack may come back
                reason = await self.outages.wait(key, exc, reason, self.recorder)
            await self._fail(ctx, reason, SORRY_SLACK, len(ctx.log) - 1)
        except Exception as exc:
            if isinstance(exc, LeaseLost | RunDeferred) or store_unavailable(exc):
                raise  # the request stays owed: the scheduler resumes it
            await self._fail_unexpectedly(ctx, exc)

    async def _admitted(
        self, ctx: RunContext, requests: list[AnswerRequest], rules: ChannelRules | None
    ) -> bool:
        """Whether the run answers anyone: in a channel whose settings list who may use the
        bot, the people it answers are asked about again (the ack takes a message whose
        author Slack could not decide on; a Slack failure here defers the run). Those who may
        not are told as at the ack; a run left with no one to answer ends at once."""
        if self.access is None or rules is None or rules.access != "listed":
            return True
        authors: dict[str, bool] = {}  # user -> in a reply in the thread
        for request in requests:
            entry = ctx.log.entries[request.index]
            if isinstance(entry, UserEntry):
                user = entry.content.userid.removeprefix("<@").removesuffix(">")
                authors[user] = request.message_ts != ctx.key.thread_ts
        refused = [u for u in authors if not await self.access.may_use(ctx.key.team, u, rules)]
        for user in refused:
            await self.access.refuse(self.recorder, ctx.key, user, None, authors[user], rules)
        if not authors or len(refused) < len(authors):
            return True
        await self.recorder.record(ctx.key, NO_ONE_ALLOWED, answered_through=len(ctx.log) - 1)
        return False

    async def _steps(self, ctx: RunContext, taken: int = 0) -> None:
        """`taken`: the steps earlier runs of the same answer took."""
        try:
            budget = self._budget(ctx)
        except BudgetError as exc:
            reason = f"the prompt does not fit the context budget: {exc}"
            await self._fail(ctx, reason, SORRY_BUDGET, len(ctx.log) - 1)
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
            except BudgetError as exc:
                reason = f"the prompt does not fit the context budget: {exc}"
                await self._fail(ctx, reason, SORRY_BUDGET, seen_through)
                return
            except ModelRefused as exc:
                await self._refused(ctx, exc, seen_through)
                return
            except ModelError as exc:
                # The console's trace shows the Error entry; stderr says which server failed
                # and why, for whoever runs the process.
                why = f" ({exc.reason})" if exc.reason else ""
                log.warning(
                    "the model server at %s failed a run in %s: %s%s",
                    self.model.where, ctx.key, exc, why,
                )  # fmt: skip
                await self._fail(ctx, f"the model call failed: {exc}", SORRY_MODEL, seen_through)
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
        await self._fail(ctx, reason, SORRY_STEPS, seen_through)

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
                return await self._ask(ctx, prompt.text, images, seen_through, estimate)
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
                    "the prompt in %s is cut to it", self.model.where, exc.window, exc.model,
                    ctx.key,
                )  # fmt: skip
                prompts.narrow(budget.within(self.model.limits.window(exc.model)))
                prompt = prompts.next()

    def _budget(self, ctx: RunContext) -> PromptBudget:
        """The prompt's budget, less what the run's tools beyond the built-ins (searchSlack,
        its MCP servers') add to every call."""
        extra = ctx.toolbox.extra_schemas if ctx.toolbox is not None else []
        return self.budget.with_tools(extra)

    async def _ask(
        self,
        ctx: RunContext,
        prompt_text: str,
        images: list[ImagePart],
        seen_through: int,
        estimate: int,
    ) -> bool:
        """One step's call, its reply carried out; True once the request is finished.
        `estimate`: the request's tokens by the budget's counter."""
        tools = ctx.toolbox.schemas if ctx.toolbox is not None else TOOL_SCHEMAS
        if self.streaming is not None and ctx.client is not None:
            return await streamed_step(
                self.model.stream_step(prompt_text, images, ctx.model, tools, estimate),
                self.streaming,
                ctx,
                seen_through,
                self._one_call,
                self._carry_out,
            )
        reply = await self.model.next_step(prompt_text, images, ctx.model, tools, estimate)
        return await self._carry_out(ctx, reply, seen_through)

    async def _carry_out(self, ctx: RunContext, reply: ModelReply, seen_through: int) -> bool:
        """Record and carry out one reply's tool calls; True once the request is finished
        (its finishRequest also records that the entries through `seen_through` are answered)."""
        ctx.posts.new_reply()
        meta: EntryMeta | None = usage_of(reply)
        if not reply.calls:
            await self.recorder.record(
                ctx.key,
                "The model answered in plain text instead of calling a tool; "
                "the text was posted with postMessage and the request finished.",
                meta=meta,
            )
            text = (reply.text or "").strip() or "…"
            await self._call(ctx, PostMessage(text=text), None, seen_through)
            await self._call(ctx, FinishRequest(), None, seen_through)
            return True
        for raw in reply.calls:
            finished, _ = await self._one_call(ctx, raw, meta, seen_through)
            if finished:
                return True
            meta = None  # usage belongs to the first entry a reply produced
        return False

    async def _one_call(
        self,
        ctx: RunContext,
        raw: RawToolCall,
        meta: EntryMeta | None,
        seen_through: int,
        stream: PostStream | None = None,
    ) -> tuple[bool, int]:
        """Record and carry out one tool call as the model made it: (whether it finished
        the request, the index of its entry)."""
        refused = ctx.posts.call_refusal()
        try:
            if ctx.toolbox is not None:
                call = ctx.toolbox.parse(raw.name, raw.arguments)
            else:
                call = parse_tool_call(raw.name, raw.arguments)
        except ToolCallError as exc:
            if stream is not None:
                await stream.discard()
            entry = await self.recorder.record(ctx.key, f"Error: {exc}", meta=meta)
            assert entry is not None
            return False, entry.index
        finished = isinstance(call, FinishRequest)
        silent = await self._silent_finish(ctx) if finished else None
        if silent == "refuse":
            entry = await self.recorder.record(ctx.key, NOT_FINISHED, meta=meta)
            assert entry is not None
            return False, entry.index
        if silent == "end" and ctx.addressed:
            # Someone who asked the bot itself is never left with silence: the apology.
            return True, await self._fail(ctx, NO_ANSWER, SORRY_NO_ANSWER, seen_through)
        if refused is not None and not finished:
            # Recorded as the model made it, then why it was not carried out, as a post past
            # the caps is (assistant.run.loop.post_limits).
            if stream is not None:
                await stream.discard()
            entry = await self.recorder.record(ctx.key, call, meta=meta)
            assert entry is not None
            why = NOT_CARRIED_OUT.format(name=call.called, index=entry.index, why=refused)
            left = still_there(stream.left) if stream is not None else ""
            await self.recorder.record(ctx.key, f"{why} {left}".strip())
            return False, entry.index
        index = await self._call(ctx, call, meta, seen_through, stream)
        return finished, index

    async def _silent_finish(self, ctx: RunContext) -> Literal["refuse", "end"] | None:
        """What becomes of the run's finishRequest if no post of the answer was shown
        (assistant.run.loop.answer_so_far.silent_finish); None when one was."""
        if ctx.posts.posted:  # most answers: something was posted, no need to read the log
            return None
        entries = await self.recorder.entries(ctx.key, start=ctx.answer_from)
        return silent_finish(entries, answer_start(entries, ctx.answer_from))

    async def _call(
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
            ctx.key, call, meta=meta, answered_through=answered_through
        )
        assert entry is not None  # only user entries and event ids are ever deduplicated
        if ctx.cards is not None:
            await ctx.cards.note(entry)
        if isinstance(call, ServerToolCall) and ctx.toolbox and ctx.toolbox.needs_approval(call):
            result: str | None = await self._ask_approval(ctx, call, entry.index)
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

    async def _ask_approval(self, ctx: RunContext, call: ServerToolCall, index: int) -> str:
        """Ask the person who asked to allow or deny the call (docs/slack-features.md,
        "Approvals"), record that it waits, and stop the run (ApprovalPending) with its
        request still owed, deferred to the expiry; a click resumes it sooner. Returns a
        result only when there is no one to ask."""
        if ctx.asker is None or ctx.client is None:
            return NO_ONE_TO_ASK.format(name=call.called, index=index)
        now = datetime.now(UTC)
        until = now + timedelta(seconds=self.approval_seconds)
        # Deferred before anyone can click: a click's "due now" is never overwritten.
        await self._defer(ctx, until)
        text, blocks = request_message(
            ctx.key.channel, ctx.key.thread_ts, index, call.called, call.arguments, ctx.asker,
            until, ctx.words,
        )  # fmt: skip
        ensure_lease()
        posted = await ctx.client.chat_postMessage(
            channel=ctx.key.channel, thread_ts=ctx.key.thread_ts, text=text, blocks=blocks,
            metadata=NOTICE_METADATA, **ctx.post_as,
        )  # fmt: skip
        ts = posted.get("ts")
        asked = requested_text(
            call.called, index, ctx.asker, until, ts if isinstance(ts, str) else None,
            call.arguments,
        )  # fmt: skip
        entry = await self.recorder.record(ctx.key, asked)
        if ctx.cards is not None:
            if entry is not None:
                await ctx.cards.note(entry)  # "Waiting for approval", as the run stops
            await ctx.cards.close()
        raise self._suspended(until)

    async def _defer(self, ctx: RunContext, until: datetime) -> None:
        """Keep the thread owed but not due before `until` (any process's sweep resumes it
        then; a click makes it due at once). Not a Slack outage: no `since`, so a later
        outage's bound starts when it does."""
        store = self.recorder.store
        await async_store(store).write(store.defer, ctx.key, None, until)

    def _suspended(self, until: datetime) -> ApprovalPending:
        wait = max((until - datetime.now(UTC)).total_seconds(), 0.0)
        return ApprovalPending(f"a tool call waits for a person's approval until {until}", wait)

    async def _settle_approval(self, ctx: RunContext) -> None:
        """A call the log shows waiting for approval: carried out once allowed; a result
        the model reads once denied or expired; else the run waits on."""
        pending = pending_approval(ctx.log.entries)
        if pending is None:
            return
        now = datetime.now(UTC)
        if pending.decision is None and self.client is None:
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
                raise self._suspended(pending.until)
        call = ctx.log.entries[pending.index].content
        result: str | None
        if pending.decision == "allowed" and isinstance(call, ServerToolCall) and ctx.toolbox:
            result = await ctx.toolbox.approved(call, ctx, pending.index)
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

    async def _show_expired(self, ctx: RunContext, pending: Pending, call: ServerToolCall) -> None:
        """The buttons' message says the approval expired (a courtesy: the log has it)."""
        if ctx.client is None or pending.message_ts is None:
            return
        text, blocks = outcome_message(
            call.called, call.arguments, pending.requester, "expired", pending.until, ctx.words
        )
        try:
            await ctx.client.chat_update(
                channel=ctx.key.channel, ts=pending.message_ts, text=text, blocks=blocks
            )
        except SLACK_FAILURES as exc:
            log.info("could not mark the approval in %s expired: %s", ctx.key, slack_reason(exc))

    async def _refused(self, ctx: RunContext, exc: ModelRefused, seen_through: int) -> None:
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
        await self._fail(ctx, f"the model call failed: {exc}", sorry, seen_through)

    async def _fail(self, ctx: RunContext, reason: str, message: Message, seen_through: int) -> int:
        """One short message for the people in the thread, in their language; the reason,
        and the message in its source text, for the log (the index of its entry)."""
        outcome = "No one was told (replay)."
        sorry = message.shown(ctx.words)
        if self.client is not None:
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
                    await self.client.chat_postMessage(
                        channel=ctx.key.channel, thread_ts=ctx.key.thread_ts, text=sorry,
                        metadata=NOTICE_METADATA,  # not a half-written stream (stream_leftovers)
                        **ctx.post_as,
                    )  # fmt: skip
                outcome = f'The user was told: "{message.english()}"'
            except SLACK_FAILURES as exc:
                outcome = "The thread could not be told."
                log.warning("could not tell %s about a failure: %s", ctx.key, slack_reason(exc))
            outcome = f"{outcome} {left}".strip()
        entry = await self.recorder.record(
            ctx.key, f"{FAILURE_PREFIX}{reason}. {outcome}", answered_through=seen_through
        )
        assert entry is not None  # only user entries and event ids are ever deduplicated
        return entry.index

    async def _fail_unexpectedly(self, ctx: RunContext, exc: Exception) -> None:
        """A failure no part of the run expected (a bug, an answer of a shape no one
        foresaw): the thread is told, the log names it, the traceback goes to the console."""
        log.error("the run in thread %s failed", ctx.key, exc_info=exc)
        reason = f"the run failed unexpectedly ({type(exc).__name__})"
        await self._fail(ctx, reason, SORRY_UNEXPECTED, len(ctx.log) - 1)


def _asker(context_log: ContextLog, requests: list[AnswerRequest]) -> str | None:
    """The Slack user id of the last person the run answers (None: no person's entry)."""
    for request in reversed(requests):
        if request.index < len(context_log.entries):
            entry = context_log.entries[request.index]
            if isinstance(entry, UserEntry):
                return entry.content.userid.removeprefix("<@").removesuffix(">")
    return None
