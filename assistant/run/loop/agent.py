"""The agent (docs/architecture.md#the-agent-loop): a run's setup and its frame. It reads the
log, shows the run in Slack (the agent session, or the older ways), chooses the words of the
person it answers, builds the run's context and tools, checks who may be answered, settles
what an earlier run of the answer left (streams, posts, approvals, calls), then hands over to
the step loop (`step_loop.py`), whose replies tool dispatch carries out (`dispatch.py`), and
ends what fails with an apology (`endings.py`); approvals are `run/approvals/asking.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import ENGLISH
from assistant.run.approvals.asking import ApprovalPending, Approvals
from assistant.run.approvals.sign_in import SignInWaits
from assistant.run.channels.channel_rules import ChannelRules, Channels
from assistant.run.channels.languages import LOCALE_LINE, Languages
from assistant.run.channels.memory_writers import may_write_memory
from assistant.run.core.deferral import RESTARTED, RunDeferred
from assistant.run.core.lease import LeaseLost, ensure_lease
from assistant.run.core.post_limits import PostCaps, PostLimits
from assistant.run.core.prompt import PromptBudget
from assistant.run.core.recorder import Recorder
from assistant.run.core.requests import AnswerRequest
from assistant.run.core.run_context import RunContext, ToolFunction
from assistant.run.core.sessions import AgentSessions, initiator, session_title
from assistant.run.core.slack_outage import SlackOutages
from assistant.run.core.spend import Spending
from assistant.run.core.store_errors import store_unavailable
from assistant.run.loop.answer_so_far import answer_start, count_so_far
from assistant.run.loop.apologies import SORRY_SLACK
from assistant.run.loop.channel_access import ChannelAccess
from assistant.run.loop.dispatch import SLACK_TOOLS, Dispatch
from assistant.run.loop.endings import Endings
from assistant.run.loop.images import ImageParts
from assistant.run.loop.step_loop import StepLoop, StepModel
from assistant.run.progress.indicators import Progress
from assistant.run.progress.panel_status import PanelStatus
from assistant.run.streaming.streams import SlackStreaming
from assistant.run.tools.post_message import finish_interrupted_posts, finish_interrupted_streams
from assistant.run.tools.server_tools import ServerCaps
from assistant.run.tools.toolbox import Toolbox, toolbox
from assistant.slack.bot_identity import bot_user_of
from assistant.slack.connection import SLACK_FAILED, SLACK_FAILURES, slack_reason
from assistant.slack.history import ThreadHistory
from context.entry import SystemEntry, UserEntry
from context.log import ContextLog
from context.memory import scope_of
from context.storage import ThreadKey

# The MCP SDK is imported only where ASSISTANT_MCP_FILE names servers (assistant.app).
if TYPE_CHECKING:
    from assistant.mcp.servers import McpServers

__all__ = ["SLACK_TOOLS", "Agent", "SlackSide", "StepModel"]

NO_ONE_ALLOWED = (
    "Not answered: the channel's settings do not list the people this run would answer, "
    "as Slack said once it could be asked."
)


@dataclass(frozen=True)
class SlackSide:
    """What a run does in Slack beyond its tools' posts, and how a channel shapes it. A
    replay (and a benchmark) has no Slack at all: `Agent.slack` is None."""

    client: AsyncWebClient
    history: ThreadHistory | None = None  # None: getThreadHistory reads the log only
    images: ImageParts | None = None  # None: the prompt carries image markers only
    panel_status: PanelStatus | None = None  # None: no legacy panel status
    streaming: SlackStreaming | None = None  # None: texts are posted whole (ASSISTANT_STREAM)
    outages: SlackOutages | None = None  # None: a Slack error ends the run at once
    channels: Channels | None = None  # None: ASSISTANT_MODEL, posts as the app
    sessions: AgentSessions | None = None  # None: no agent sessions
    access: ChannelAccess | None = None  # None: who asked is not checked again
    languages: Languages | None = None  # None: English, no one asked


@dataclass(frozen=True)
class Agent:
    recorder: Recorder
    model: StepModel
    max_steps: int
    budget: PromptBudget
    slack: SlackSide | None = None  # None: no Slack (a replay, a benchmark)
    tools: dict[str, ToolFunction] = field(default_factory=lambda: dict(SLACK_TOOLS))
    post_caps: PostCaps = field(default_factory=PostCaps)
    mcp: McpServers | None = None  # None: no MCP servers (no ASSISTANT_MCP_FILE, or a replay)
    mcp_caps: ServerCaps = field(default_factory=ServerCaps)
    # A replay's tools, the servers' it recorded among them (None: built from `mcp`).
    fixed_tools: Toolbox | None = None
    approval_seconds: float = 900.0  # ASSISTANT_APPROVAL_SECONDS
    # The channels' spend limits (docs/operations.md#spend-limits); None: none (a replay).
    spending: Spending | None = None

    @cached_property
    def endings(self) -> Endings:
        return Endings(self.recorder)

    @cached_property
    def approvals(self) -> Approvals:
        return Approvals(self.recorder, self.approval_seconds)

    @cached_property
    def sign_ins(self) -> SignInWaits:
        signing = self.mcp.sign_ins if self.mcp is not None else None
        return SignInWaits(
            self.recorder, signing.begin if signing is not None else None, self.approval_seconds
        )

    @cached_property
    def step_loop(self) -> StepLoop:
        dispatch = Dispatch(self.recorder, self.endings, self.approvals, self.tools)
        slack = self.slack
        return StepLoop(
            recorder=self.recorder,
            model=self.model,
            max_steps=self.max_steps,
            budget=self.budget,
            dispatch=dispatch,
            endings=self.endings,
            images=slack.images if slack else None,
            streaming=slack.streaming if slack else None,
            spending=self.spending,
        )

    async def run(self, key: ThreadKey, requests: list[AnswerRequest]) -> None:
        """Answer the requests; the run's last entry records that they are answered."""
        slack = self.slack
        client = slack.client if slack else None
        context_log = ContextLog(await self.recorder.entries(key))
        progress = Progress(
            client=client,
            key=key,
            message_ts=requests[-1].message_ts,
            sessions=slack.sessions if slack else None,
            panel_status=slack.panel_status if slack else None,
            title=session_title(context_log),
            initiator=initiator(context_log),
        )
        await progress.start()  # before any other Slack call: the session shows the stop button
        try:
            bot_user_id = next((r.bot_user_id for r in reversed(requests) if r.bot_user_id), None)
            if bot_user_id is None and client is not None:
                bot_user_id = await bot_user_of(client)  # a run resumed after a restart
            channels = slack.channels if slack else None
            rules = await channels.rules(key.team, key.channel) if channels else None
            spoken = None
            asker = _asker(context_log, requests)
            if slack and slack.languages:  # the words of the person the run answers last
                spoken = await slack.languages.of(client, key.team, asker, rules)
                await self._tell_locale(key, context_log, asker, spoken.line(asker or ""))
            search = rules.search if rules else None
            writers = rules.memory if rules else "off"
            memory = await may_write_memory(writers, asker, key.team, client, self.recorder.store)
            ctx = RunContext(
                key,
                client,
                slack.history if slack else None,
                f"<@{bot_user_id or 'assistant'}>",
                context_log,
                self.recorder.store,
                PostLimits(self.post_caps),
                recorder=self.recorder,
                model=rules.model if rules else None,
                post_as=rules.post_as if rules else {},
                in_session=progress.in_session,
                words=spoken.words if spoken is not None else ENGLISH,
                search=search,
                asker=asker,
                answer_from=requests[0].index,
                addressed=any(r.addressed for r in requests),
                limits=rules.limits if rules else None,
                memory=writers,
            )
            # The channel's settings choose its servers (None: all), whether it may search, and
            # whether the person answered may write its memory.
            box = self.fixed_tools or await toolbox(
                self.tools,
                self.mcp,
                rules.tool_servers if rules else None,
                self.mcp_caps,
                search=search is not None,
                budget=self.budget,
                person=(key.team, asker) if asker is not None else None,
                sign_ins=self.sign_ins,
                memory=memory,
                # A routine is a channel's: proposed only in its threads, to a person answered.
                routine=asker is not None
                and client is not None
                and scope_of(key.channel) == "channel",
            )
            ctx = replace(ctx, toolbox=box)
            if slack and slack.streaming:  # the steps shown as task cards while it streams
                ctx = replace(ctx, cards=slack.streaming.cards(ctx, requests[0].index))
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
            e.content
            for e in context_log.entries
            if isinstance(e, SystemEntry) and e.content.startswith(prefix)
        ]
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
        outages = self.slack.outages if self.slack else None
        try:
            if not await self._admitted(ctx, requests, rules):
                return
            # The caps and the step cap bound the answer, not this process: count what the
            # runs before this one (killed, or stopped by a lost lease) did for it.
            steps_taken = await count_so_far(ctx, requests[0].index)
            if self.slack is not None:
                why = await outages.resumed(key) if outages else RESTARTED
                await finish_interrupted_streams(ctx, self.recorder, why)
                await finish_interrupted_posts(ctx, self.recorder, requests[0].index, why)
            await self.sign_ins.settle(ctx)  # a call that waits for a sign-in goes first
            await self.approvals.settle(ctx)
            start = answer_start(ctx.log.entries, ctx.answer_from)  # this answer's entries
            await self.approvals.settle_unfinished(ctx, start)
            await self.step_loop.steps(ctx, steps_taken)
            if ctx.cards is not None:
                await ctx.cards.close()
        except SLACK_FAILURES as exc:
            reason = f"{SLACK_FAILED}{slack_reason(exc)}"
            if outages is not None:  # raises RunDeferred while Slack may come back
                reason = await outages.wait(key, exc, reason, self.recorder)
            await self.endings.fail(ctx, reason, SORRY_SLACK, len(ctx.log) - 1)
        except Exception as exc:
            if isinstance(exc, LeaseLost | RunDeferred) or store_unavailable(exc):
                raise  # the request stays owed: the scheduler resumes it
            await self.endings.fail_unexpectedly(ctx, exc)

    async def _admitted(
        self, ctx: RunContext, requests: list[AnswerRequest], rules: ChannelRules | None
    ) -> bool:
        """Whether the run answers anyone: in a channel whose settings list who may use the
        bot, the people it answers are asked about again (the ack takes a message whose
        author Slack could not decide on; a Slack failure here defers the run). Those who may
        not are told as at the ack; a run left with no one to answer ends at once."""
        access = self.slack.access if self.slack else None
        if access is None or rules is None or rules.access != "listed":
            return True
        authors: dict[str, bool] = {}  # user -> in a reply in the thread
        for request in requests:
            entry = ctx.log.entries[request.index]
            if isinstance(entry, UserEntry):
                user = entry.content.userid.removeprefix("<@").removesuffix(">")
                authors[user] = request.message_ts != ctx.key.thread_ts
        refused = [u for u in authors if not await access.may_use(ctx.key.team, u, rules)]
        for user in refused:
            await access.refuse(self.recorder, ctx.key, user, None, authors[user], rules)
        if not authors or len(refused) < len(authors):
            return True
        await self.recorder.record(ctx.key, NO_ONE_ALLOWED, answered_through=len(ctx.log) - 1)
        return False


def _asker(context_log: ContextLog, requests: list[AnswerRequest]) -> str | None:
    """The Slack user id of the last person the run answers (None: no person's entry)."""
    for request in reversed(requests):
        if request.index < len(context_log.entries):
            entry = context_log.entries[request.index]
            if isinstance(entry, UserEntry):
                return entry.content.userid.removeprefix("<@").removesuffix(">")
    return None
