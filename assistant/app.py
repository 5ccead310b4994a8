"""Wiring: the running assistant's parts, built once from the settings, and its Bolt app."""

from __future__ import annotations

import asyncio
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from assistant import listeners
from assistant.intake.channel_gate import ChannelGate
from assistant.intake.events import EventRecorder
from assistant.intake.link_access import LinkAccess
from assistant.intake.message_content import MessageContent
from assistant.intake.stops import StopButton
from assistant.model.client import ModelClient
from assistant.panel.events import Panel
from assistant.panel.feedback import Feedback
from assistant.panel.home import AppHome
from assistant.run.agent import Agent
from assistant.run.channel_rules import Channels
from assistant.run.elsewhere import RunsElsewhere
from assistant.run.images import ImageParts
from assistant.run.panel_status import PanelStatus
from assistant.run.recorder import Recorder
from assistant.run.scheduler import RunScheduler
from assistant.run.sessions import AgentSessions
from assistant.run.slack_outage import SlackOutages
from assistant.run.stop import StopRecorder
from assistant.run.stream_sweeper import StreamSweeper
from assistant.run.streaming import SlackStreaming
from assistant.settings import Settings
from assistant.slack.bot_identity import BotIdentity
from assistant.slack.channel_names import ChannelNames
from assistant.slack.client import close_slack_client, configure_slack_client
from assistant.slack.files import SlackFiles
from assistant.slack.history import ThreadHistory
from assistant.telemetry.start import open_telemetry
from context.storage import Store, open_store
from context.trace import open_trace

if TYPE_CHECKING:  # the SDK is imported only when telemetry is on
    from assistant.telemetry.runs import Telemetry

EVENT_THREADS = 2  # SQLite takes one writer at a time anyway; the other reads meanwhile


@dataclass(frozen=True)
class Assistant:
    settings: Settings
    store: Store
    client: AsyncWebClient
    model: ModelClient
    scheduler: RunScheduler | None  # None in the ingress role: runs are the workers'
    events: EventRecorder
    app: AsyncApp
    channel_names: ChannelNames
    identity: BotIdentity
    telemetry: Telemetry | None = None  # when the OTEL_* variables ask for it

    async def close(self) -> None:
        if self.scheduler is not None:
            await self.scheduler.stop()
        await self.channel_names.close()
        await self.model.close()
        await self.events.content.files.close()
        await close_slack_client(self.client)
        self.events.recorder.close()
        self.store.close()
        if self.telemetry is not None:  # what is queued is exported (the SDK's timeouts)
            await asyncio.to_thread(self.telemetry.providers.shutdown)


def create_assistant(
    settings: Settings,
    trace: TextIO | None = None,
    resume: bool = True,
    identity: BotIdentity | None = None,
    runs: bool = True,
) -> Assistant:
    """Build every part; call inside the event loop that will serve it. `resume`: look for
    threads that crashed runs left owed, now and every half lease (see `RunScheduler`).
    `identity`: the bot's, if the token was checked already. `runs`: False for the ingress
    role, which records events and runs nothing, not even what is owed (the workers do)."""
    store = open_store(settings.database_url)
    assert settings.slack_bot_token is not None
    identity = identity or BotIdentity(settings.slack_bot_token.get_secret_value())
    # Bolt is given the token, not a client: given a client, it still reads SLACK_BOT_TOKEN
    # from the environment (whenever no token is passed) and then warns that the token it
    # found is unused. The client it builds from the token is then configured as ours.
    app = AsyncApp(
        token=settings.slack_bot_token.get_secret_value(),
        signing_secret=(
            settings.slack_signing_secret.get_secret_value()
            if settings.slack_signing_secret
            else ""  # Socket Mode: Slack signs nothing, the websocket is authenticated
        ),
        # Acknowledge an event only once it is recorded (the run itself starts after): a
        # process killed before that leaves Slack to retry it, so no message is lost.
        process_before_response=True,
        # The bot's identity learned once, never asked for inside a request: an event is
        # recorded and acknowledged whatever Slack's Web API does (assistant/slack/bot_identity.py).
        authorize=identity,
    )
    client = configure_slack_client(app.client, settings.slack_api_base)
    identity.client = client
    channel_names = ChannelNames(client)
    telemetry = open_telemetry(settings.assistant_name, store)
    recorder = Recorder(
        store,
        open_trace(settings.assistant_trace, trace or sys.stdout, channel_names),
        observer=telemetry,
    )
    model = ModelClient(settings.model_options())
    if telemetry is not None:
        from assistant.telemetry.slack import acknowledged, count_rate_limits

        model.watcher = telemetry
        count_rate_limits(client, telemetry)
        app.use(acknowledged(telemetry))
    files = SlackFiles(settings.slack_bot_token.get_secret_value(), settings.slack_api_base)
    channels = Channels(store, settings.instructions, settings.personas())
    scheduler = (
        _scheduler(settings, store, client, recorder, model, files, channels, telemetry)
        if runs
        else None
    )
    if scheduler is not None and resume:
        scheduler.start()
    # Events are recorded before Slack gets its acknowledgement: their store calls get
    # threads of their own, so that they never wait behind the runs' (a few ms each, but
    # hundreds of them under load).
    event_threads = ThreadPoolExecutor(EVENT_THREADS, thread_name_prefix="events")
    event_recorder = Recorder(store.urgent(), recorder.trace, event_threads, telemetry)
    access = LinkAccess(client)  # one set of cached answers: links and feedback clicks
    content = MessageContent(
        client, files, model.transcribe, access, settings.assistant_max_image_bytes
    )
    gate = ChannelGate(channels, client, event_recorder)
    events = EventRecorder(
        settings, event_recorder, scheduler or RunsElsewhere(), content, gate
    )
    feedback = Feedback(event_recorder, access)
    home = AppHome(store, channels.personas)
    stops = StopButton(event_recorder, scheduler)
    panel = Panel(settings, event_recorder, channels)
    listeners.register(app, events, panel, feedback, home, stops)
    return Assistant(
        settings, store, client, model, scheduler, events, app, channel_names, identity, telemetry
    )


def _scheduler(
    settings: Settings,
    store: Store,
    client: AsyncWebClient,
    recorder: Recorder,
    model: ModelClient,
    files: SlackFiles,
    channels: Channels,
    telemetry: Telemetry | None = None,
) -> RunScheduler:
    """This process's runs: the agent, and the scheduler that claims threads for it."""
    images = ImageParts(
        files,
        store,
        settings.assistant_max_images,
        settings.assistant_max_image_bytes,
        settings.assistant_max_prompt_image_bytes,
    )
    sessions = AgentSessions(client)
    streaming = SlackStreaming() if settings.assistant_stream == "auto" else None
    agent = Agent(
        recorder,
        model,
        client,
        ThreadHistory(store, client),
        settings.assistant_max_steps,
        settings.prompt_budget(),
        images=images,
        post_caps=settings.post_caps(),
        panel_status=PanelStatus(client, store, settings.assistant_loading_messages),
        streaming=streaming,
        outages=SlackOutages(store, settings.assistant_slack_outage_seconds),
        channels=channels,
        sessions=sessions,
    )
    lease = settings.assistant_run_lease_seconds
    sweeper = StreamSweeper(store, client, recorder, first_wait=lease / 2)
    stream_client = streaming.client_for(client) if streaming is not None else None
    stopped = StopRecorder(recorder, client, sessions, stream_client)
    if telemetry is None:
        return RunScheduler(agent.run, store, lease, tidy=sweeper, stopped=stopped)
    run, stop = telemetry.runs(agent.run), telemetry.stops(stopped)
    return RunScheduler(run, store, lease, tidy=sweeper, stopped=stop)
