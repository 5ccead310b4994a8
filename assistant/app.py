"""Wiring: the running assistant's parts, built once from the settings, and its Bolt app."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, TextIO

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from assistant import listeners
from assistant.app_oauth import MANIFEST, create_bolt_app
from assistant.i18n.languages import words_for
from assistant.intake.approvals import ApprovalButtons
from assistant.intake.channel_gate import ChannelGate
from assistant.intake.events import EventRecorder
from assistant.intake.link_access import LinkAccess
from assistant.intake.memory_undo import MemoryUndo
from assistant.intake.message_content import MessageContent
from assistant.intake.questions import QuestionButtons
from assistant.intake.routine_buttons import RoutineButtons
from assistant.intake.stops import StopButton
from assistant.listeners.events.uninstalls import Uninstalls
from assistant.listeners.parts import Parts
from assistant.model.check import Finding, check_models, summary
from assistant.model.client import ModelClient
from assistant.model.tool_calls import offered_tools
from assistant.panel.events import Panel
from assistant.panel.feedback import Feedback
from assistant.panel.home import AppHome
from assistant.panel.legacy_view import check_manifest
from assistant.panel.messages_tab import MessagesTab
from assistant.panel.session_titles import SessionTitles
from assistant.routines.runs import RoutineRuns
from assistant.routines.ticker import RoutineTicker
from assistant.run.channels.channel_rules import Channels
from assistant.run.channels.languages import Languages
from assistant.run.core.recorder import Recorder
from assistant.run.core.sessions import AgentSessions
from assistant.run.core.slack_outage import SlackOutages
from assistant.run.core.spend import Spending, tell_who_set_it, utc_now
from assistant.run.judging.live import LiveJudge
from assistant.run.loop.agent import Agent, SlackSide
from assistant.run.loop.channel_access import ChannelAccess
from assistant.run.loop.images import ImageParts
from assistant.run.progress.panel_status import PanelStatus
from assistant.run.scheduling.elsewhere import RunsElsewhere
from assistant.run.scheduling.scheduler import RunScheduler
from assistant.run.scheduling.workspace_runs import WorkspaceRuns
from assistant.run.stopping.stop import StopRecorder
from assistant.run.streaming.streams import SlackStreaming
from assistant.run.streaming.sweeper import StreamSweeper
from assistant.settings.environment import Settings
from assistant.slack.bot_identity import BotIdentity
from assistant.slack.channel_names import ChannelNames
from assistant.slack.client import close_slack_client
from assistant.slack.files import SlackFiles
from assistant.slack.history import ThreadHistory
from assistant.slack.workspaces import PerWorkspace, Workspaces
from assistant.telemetry.start import open_telemetry
from context.storage import Store, open_store
from context.trace import open_trace

# The OpenTelemetry SDK is imported only when telemetry is on; the MCP SDK (which imports
# OpenTelemetry's API and Starlette) only where ASSISTANT_MCP_FILE names servers.
if TYPE_CHECKING:
    from assistant.intake.sign_ins import SignInCallback
    from assistant.mcp.check import McpFinding
    from assistant.mcp.servers import McpServers
    from assistant.mcp.signin.tokens import SignIns
    from assistant.telemetry.runs import Telemetry

EVENT_THREADS = 2  # SQLite takes one writer at a time anyway; the other reads meanwhile


@dataclass(frozen=True, kw_only=True)
class Assistant:
    settings: Settings
    store: Store
    workspaces: Workspaces  # each workspace's client (assistant/slack/workspaces.py)
    files: PerWorkspace[SlackFiles]
    model: ModelClient
    scheduler: RunScheduler | None  # None in the ingress role: runs are the workers'
    events: EventRecorder
    app: AsyncApp
    channel_names: ChannelNames
    identity: BotIdentity | None  # None: installed through OAuth, each workspace's own
    telemetry: Telemetry | None = None  # when the OTEL_* variables ask for it
    mcp: McpServers | None = None  # ASSISTANT_MCP_FILE's servers, when it names any
    # The `auth: user` servers' sign-in callback (the HTTP app's /mcp/oauth/callback).
    sign_in_callback: SignInCallback | None = None
    background: set[asyncio.Task[None]] = field(default_factory=set)  # the model check
    judge: LiveJudge | None = None  # ASSISTANT_JUDGE_SAMPLE over 0: live answers judged

    @property
    def client(self) -> AsyncWebClient:
        """The app's own client: with SLACK_BOT_TOKEN, the one workspace's; through OAuth,
        one without a token (installs, token refreshes)."""
        return self.app.client

    async def model_summary(self) -> str:
        """The model check's one-line summary (its findings applied to the model client)."""
        try:
            findings = await model_findings(self.settings, self.model, self.store)
        except Exception as exc:  # never the caller's failure
            return f"model check of {self.model.where}: not made ({type(exc).__name__})"
        return summary(self.model.where, findings)

    def check_model_server(self, out: TextIO) -> None:
        """Print the model check's one-line summary when it is done (`assistant check`,
        ASSISTANT_MODEL_CHECK=on): in the background, so it never delays the start, and never
        failing it. What it finds applies at once (a model found to ignore tool_choice is
        asked as JSON)."""
        if self.settings.model.check == "off":
            return

        async def check() -> None:
            print(await self.model_summary(), file=out, flush=True)

        task = asyncio.create_task(check())
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def mcp_summary(self) -> str:
        """The MCP check's one-line summary: every server connected (the connections kept for
        the runs), every problem said at once."""
        from assistant.mcp.check import summary as said

        if self.mcp is None:
            return "MCP check: no server (ASSISTANT_MCP_FILE)"
        try:
            return said(await mcp_findings(self.settings, self.mcp))
        except Exception as exc:  # never the caller's failure
            return f"MCP check: not made ({type(exc).__name__})"

    def check_mcp_servers(self, out: TextIO) -> None:
        """Print the MCP check's summary (`assistant check` says more) when it is done, in the
        background, when ASSISTANT_MCP_FILE names servers: what a run would leave out is said
        at start, not at the first run that finds it."""
        if self.mcp is None:
            return

        async def check() -> None:
            print(await self.mcp_summary(), file=out, flush=True)

        task = asyncio.create_task(check())
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def close(self) -> None:
        for task in list(self.background):
            task.cancel()
        await asyncio.gather(*self.background, return_exceptions=True)
        if self.scheduler is not None:
            await self.scheduler.stop()
        if self.judge is not None:  # after the runs, which start its tasks
            await self.judge.close()
        await self.channel_names.close()
        await self.model.close()
        if self.mcp is not None:  # the stdio servers' processes end with their connections
            await self.mcp.close()
        for files in self.files.built():
            await files.close()
        await self.workspaces.close()
        await close_slack_client(self.app.client)  # Bolt's, configured as ours
        self.events.recorder.close()
        self.store.close()
        if self.telemetry is not None:  # what is queued is exported (the SDK's timeouts)
            await asyncio.to_thread(self.telemetry.providers.shutdown)


def models_in_use(settings: Settings, store: Store | None) -> Sequence[str]:
    """ASSISTANT_MODEL, then every other model a channel's or a workspace's settings name
    (in `store`, when there is one)."""
    configs = store.channel_configs() if store is not None else []
    named = [config.model for config in configs if config.model]
    return list(dict.fromkeys([settings.model.name, *named]))


async def model_findings(
    settings: Settings, client: ModelClient, store: Store | None
) -> list[Finding]:
    """`assistant check`'s findings for every model in use, on the configured server."""
    models = await asyncio.to_thread(models_in_use, settings, store)
    return await check_models(client, models, settings.model.wanted())


async def mcp_findings(settings: Settings, servers: McpServers | None = None) -> list[McpFinding]:
    """`assistant check`'s findings for ASSISTANT_MCP_FILE's servers, by the runs' rules: a
    run that may use every server, and searchSlack where ASSISTANT_SLACK_SEARCH turns it on.
    `servers`: the app's, whose connections stay for its runs; None: made for the check."""
    from assistant.mcp.check import check_servers
    from assistant.mcp.servers import McpServers
    from assistant.run.tools.toolbox import tool_room

    offered = offered_tools(settings.tools.slack_search)
    room = tool_room(offered, settings.tools.server_caps(), settings.model.prompt_budget())
    if servers is not None:
        return await check_servers(servers, room)
    made = McpServers(
        settings.tools.mcp_servers(),
        settings.tools.mcp_call_seconds,
        settings.tools.max_mcp_result_bytes,
    )
    try:
        return await check_servers(made, room)
    finally:
        await made.close()


def create_assistant(
    settings: Settings,
    trace: TextIO | None = None,
    resume: bool = True,
    identity: BotIdentity | None = None,
    runs: bool = True,
    clock: Callable[[], datetime] = utc_now,
) -> Assistant:
    """Build every part; call inside the event loop that will serve it. `resume`: look for
    threads that crashed runs left owed, now and every half lease (see `RunScheduler`).
    `identity`: the bot's, if the token was checked already. `runs`: False for the ingress
    role, which records events and runs nothing, not even what is owed (the workers do).
    `clock`: the time the spend limits count by (tests move the day on)."""
    store = open_store(settings.storage.database_url)
    background: set[asyncio.Task[None]] = set()
    check_manifest(MANIFEST)  # one warning if it still declares Slack's legacy assistant view
    app, workspaces, identity = create_bolt_app(settings, store, identity)
    channel_names = ChannelNames(workspaces.client)
    telemetry = open_telemetry(settings.persona.name, store)
    recorder = Recorder(
        store,
        open_trace(settings.telemetry.trace, trace or sys.stdout, channel_names),
        observer=telemetry,
        memory_tokens=settings.tools.memory_tokens or None,
    )
    model = ModelClient(settings.model.options())
    if telemetry is not None:
        from assistant.telemetry.slack import acknowledged, count_rate_limits

        model.watcher = telemetry
        workspaces.configure_each(lambda client: count_rate_limits(client, telemetry))
        app.use(acknowledged(telemetry))
    # Whatever calls Slack is built for each workspace, with its client: its token.
    files = PerWorkspace(
        workspaces, lambda client: SlackFiles(client.token or "", settings.slack.api_base)
    )
    channels = Channels(
        store,
        settings.persona.instructions,
        settings.persona.personas(),
        settings.tools.search_default(),
    )
    # The language each person is shown the bot's words in: one cache of their locales.
    languages = Languages(settings.persona.locale)
    # Who may use the bot where: the ack's and the runs' (one cache of the groups' members).
    channel_access = PerWorkspace(workspaces, lambda client: ChannelAccess(client, languages))
    # Each workspace's agent sessions, and whether it refused them: the runs' and the panel's.
    sessions = PerWorkspace(workspaces, AgentSessions)
    configs = settings.tools.mcp_servers()  # connected when a run first asks for their tools
    mcp = None
    if configs and runs:
        from assistant.mcp.servers import McpServers  # the SDK's import, only when used

        mcp = McpServers(
            configs, settings.tools.mcp_call_seconds, settings.tools.max_mcp_result_bytes
        )
    sign_ins = _sign_ins(settings, store)
    if mcp is not None:
        mcp.sign_ins = sign_ins
    judge = None
    if runs and settings.model.judge_sample > 0:
        observer = telemetry.judged if telemetry is not None else None
        # Its calls count in the channels' spend limits; the 80% notice is left to the runs.
        spending = Spending(store, settings.model.name, settings.model.prices, clock)
        judge = LiveJudge(
            store,
            model,
            settings.model.judge_sample,
            settings.model.judge_model,
            observer,
            spending,
            channels,
        )
    scheduler = (
        _scheduler(
            settings,
            store,
            workspaces,
            files,
            recorder,
            model,
            channels,
            channel_access,
            languages,
            sessions,
            identity,
            telemetry,
            mcp,
            clock,
            judge,
        )
        if runs
        else None
    )
    if scheduler is not None and resume:
        scheduler.start()
        routines = RoutineRuns(
            store,
            recorder,
            scheduler.request,
            channels,
            workspaces.client,
            channel_access.of,
            settings.answers.routine_failures,
            languages=languages,
        )
        # Where the runs are (`serve`, `run`, `worker`): each tick claimed in the database,
        # so that any number of these processes run one tick once. Cancelled by `close`.
        ticking = RoutineTicker(store).run(
            settings.answers.routine_tick_seconds, asyncio.Event(), routines.start
        )
        background.add(asyncio.create_task(ticking))
    # Events are recorded before Slack gets its acknowledgement: their store calls get
    # threads of their own, so that they never wait behind the runs' (a few ms each, but
    # hundreds of them under load).
    event_threads = ThreadPoolExecutor(EVENT_THREADS, thread_name_prefix="events")
    event_recorder = Recorder(
        store.urgent(), recorder.trace, event_threads, telemetry, recorder.memory_tokens
    )
    # One set of cached answers per workspace: links and feedback clicks.
    access = PerWorkspace(workspaces, LinkAccess)
    content = PerWorkspace(
        workspaces,
        lambda client: MessageContent(
            client,
            files.for_client(client),
            model.transcribe,
            access.for_client(client),
            settings.model.max_image_bytes,
        ),
    )
    gate = PerWorkspace(
        workspaces,
        lambda client: ChannelGate(channels, channel_access.for_client(client), event_recorder),
    )
    events = EventRecorder(settings, event_recorder, scheduler or RunsElsewhere(), content, gate)
    feedback = Feedback(event_recorder, access)
    home = AppHome(
        store,
        channels.personas,
        languages,
        sign_ins.disconnect if sign_ins is not None else None,
    )
    stops = StopButton(event_recorder, scheduler)
    panel = Panel(settings, event_recorder, channels, languages, sessions)
    approvals = ApprovalButtons(event_recorder, scheduler or RunsElsewhere(), languages)
    tab = MessagesTab(panel.settings, panel.recorder, panel.languages, panel.prompts)
    uninstalls = Uninstalls.of(app, settings.slack.oauth)
    parts = Parts(
        events=events,
        panel=panel,
        feedback=feedback,
        home=home,
        stops=stops,
        approvals=approvals,
        questions=QuestionButtons(store, languages),
        messages_tab=tab,
        session_titles=SessionTitles(panel.recorder),
        uninstalls=uninstalls,
        memory_undo=MemoryUndo(event_recorder, languages),
        routine_buttons=RoutineButtons(event_recorder, languages),
    )
    listeners.register(app, parts)
    callback = None
    if sign_ins is not None:
        from assistant.intake.sign_ins import SignInCallback

        callback = SignInCallback(event_recorder, scheduler or RunsElsewhere(), sign_ins)
    return Assistant(
        settings=settings,
        store=store,
        workspaces=workspaces,
        files=files,
        model=model,
        scheduler=scheduler,
        events=events,
        app=app,
        channel_names=channel_names,
        identity=identity,
        telemetry=telemetry,
        mcp=mcp,
        sign_in_callback=callback,
        judge=judge,
        background=background,
    )


def _sign_ins(settings: Settings, store: Store) -> SignIns | None:
    """The sign-ins of ASSISTANT_MCP_FILE's `auth: user` and `auth: deployment` servers (None:
    it names none); the start's checks (`load_settings`) made sure of the key and the public
    URL."""
    configs = [c for c in settings.tools.mcp_servers() if c.signs_in]
    key, public_url = settings.tools.secret_key, settings.tools.public_url
    if not configs or key is None or public_url is None:
        return None
    from assistant.mcp.signin.sealing import Sealer
    from assistant.mcp.signin.tokens import SignIns

    return SignIns(store, Sealer(key.get_secret_value()), public_url, configs)


def _scheduler(
    settings: Settings,
    store: Store,
    workspaces: Workspaces,
    files: PerWorkspace[SlackFiles],
    recorder: Recorder,
    model: ModelClient,
    channels: Channels,
    channel_access: PerWorkspace[ChannelAccess],
    languages: Languages,
    sessions: PerWorkspace[AgentSessions],
    identity: BotIdentity | None,
    telemetry: Telemetry | None = None,
    mcp: McpServers | None = None,
    clock: Callable[[], datetime] = utc_now,
    judge: LiveJudge | None = None,
) -> RunScheduler:
    """This process's runs: each workspace's agent, and the scheduler that claims threads."""
    streaming = SlackStreaming() if settings.model.stream == "auto" else None
    deployment_words = words_for(settings.persona.locale)  # the legacy panel status's

    def agent(client: AsyncWebClient) -> Agent:
        images = ImageParts(
            files.for_client(client),
            store,
            settings.model.max_images,
            settings.model.max_image_bytes,
            settings.model.max_prompt_image_bytes,
        )
        slack = SlackSide(
            client,
            ThreadHistory(store, client),
            images=images,
            panel_status=PanelStatus(
                client,
                store,
                settings.persona.loading_messages_in(deployment_words),
                deployment_words,
            ),
            streaming=streaming,
            outages=SlackOutages(store, settings.slack.outage_seconds),
            channels=channels,
            sessions=sessions.for_client(client),
            access=channel_access.for_client(client),
            languages=languages,
        )
        return Agent(
            recorder,
            model,
            settings.answers.max_steps,
            settings.model.prompt_budget(),
            slack,
            post_caps=settings.answers.post_caps(),
            mcp=mcp,
            mcp_caps=settings.tools.server_caps(),
            approval_seconds=settings.tools.approval_seconds,
            spending=Spending(
                store,
                settings.model.name,
                settings.model.prices,
                clock,
                tell_who_set_it(client, deployment_words),
            ),
        )

    lease = settings.answers.lease_seconds

    def stopper(client: AsyncWebClient) -> StopRecorder:
        stream_client = streaming.client_for(client) if streaming is not None else None
        return StopRecorder(recorder, client, sessions.for_client(client), stream_client, languages)

    runs = WorkspaceRuns(
        recorder,
        PerWorkspace(workspaces, agent),
        PerWorkspace(workspaces, lambda client: StreamSweeper(store, client, recorder, lease / 2)),
        PerWorkspace(workspaces, stopper),
    )
    # With one bot token, only its own workspace's threads (another's token is not ours).
    answers_team = identity.serves if identity is not None else None
    # The live judge's wrapper inside telemetry's: the judging starts once the run has ended.
    answer = judge.after(runs.run) if judge is not None else runs.run
    if telemetry is None:
        return RunScheduler(
            answer, store, lease, tidy=runs.tidy, stopped=runs.stopped, answers_team=answers_team
        )
    run, stop = telemetry.runs(answer), telemetry.stops(runs.stopped)
    return RunScheduler(run, store, lease, tidy=runs.tidy, stopped=stop, answers_team=answers_team)
