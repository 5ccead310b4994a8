"""Socket Mode (docs/architecture.md#slack-and-the-model): events over a websocket, no public URL
needed."""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

from assistant.app import create_assistant
from assistant.serving.signals import stopped_by_signals
from assistant.settings import Settings, SettingsError
from assistant.slack.bot_identity import BotIdentity
from assistant.slack.client import close_slack_client, create_slack_client
from assistant.slack.connection import ConnectionLog
from assistant.slack.tokens import refused_tokens
from assistant.telemetry.setup import check as check_telemetry


async def run_socket_mode(settings: Settings, trace: TextIO | None = None) -> None:
    assert settings.slack_app_token is not None
    app_token = settings.slack_app_token.get_secret_value()
    print("assistant run: connecting to Slack…", file=sys.stderr, flush=True)
    # slack-sdk retries a refused token forever, a traceback every few seconds: checked first,
    # and before the app is built, so that a refused start leaves no store behind.
    identity = await _checked_tokens(settings, app_token)
    assistant = create_assistant(settings, trace, identity=identity)
    assistant.check_model_server(sys.stderr)
    connection_log = ConnectionLog(assistant.client)
    handler = AsyncSocketModeHandler(
        assistant.app, app_token, web_client=assistant.client, logger=connection_log.logger
    )
    connection_log.watch(handler.client)
    # A signal ends it as `worker` does: the runs under way get a short grace, then are
    # cancelled and stay owed (RunScheduler.stop).
    with stopped_by_signals() as stopping:
        try:
            # Not `start_async()`: it prints Bolt's boot message to stdout, which is the trace's.
            await handler.connect_async()
            print("assistant run: connected to Slack over Socket Mode", file=sys.stderr, flush=True)
            await asyncio.Event().wait()  # until a signal
        finally:
            stopping.set()  # a signal from here on changes nothing
            # Events stop coming first; then the runs are ended and the parts closed.
            await handler.close_async()
            await assistant.close()
            connection_log.close()


async def _checked_tokens(settings: Settings, app_token: str) -> BotIdentity:
    """Whether Slack takes the bot and the app-level tokens (SettingsError naming each it
    refuses); what it says of the bot token, so the app need not ask again."""
    assert settings.slack_bot_token is not None  # `run` requires it
    token = settings.slack_bot_token.get_secret_value()
    identity = BotIdentity(token)
    client = create_slack_client(token, settings.slack_api_base)
    try:
        problems = await refused_tokens("run", client, app_token, identity)
    finally:
        await close_slack_client(client)
    if problems:
        raise SettingsError("\n".join(problems))
    return identity


def run(settings: Settings) -> None:
    check_telemetry()  # a protocol OTEL_* asks for that cannot be used: one line, status 2
    asyncio.run(run_socket_mode(settings))
