"""Socket Mode (docs/architecture.md#slack-and-the-model): events over a websocket, no public URL
needed."""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

from assistant.app import create_assistant
from assistant.serving.signals import stopped_by_signals
from assistant.settings.environment import Settings, SettingsError
from assistant.slack.connection import ConnectionLog
from assistant.slack.tokens import refused_tokens
from assistant.telemetry.setup import check as check_telemetry
from context.storage import new_sqlite_file, remove_sqlite_file


async def run_socket_mode(settings: Settings, trace: TextIO | None = None) -> None:
    assert settings.slack.app_token is not None
    app_token = settings.slack.app_token.get_secret_value()
    fresh = new_sqlite_file(settings.storage.database_url)  # made by this start, if it is
    started = False
    assistant = create_assistant(settings, trace)
    assistant.check_model_server(sys.stderr)
    assistant.check_mcp_servers(sys.stderr)
    connection_log = ConnectionLog(assistant.client)
    handler = AsyncSocketModeHandler(
        assistant.app, app_token, web_client=assistant.client, logger=connection_log.logger
    )
    connection_log.watch(handler.client)
    # A signal ends it as `worker` does: the runs under way get a short grace, then are
    # cancelled and stay owed (RunScheduler.stop).
    with stopped_by_signals() as stopping:
        try:
            print("assistant run: connecting to Slack…", file=sys.stderr, flush=True)
            # slack-sdk retries a refused token forever, a traceback every few seconds: check first.
            problems = await refused_tokens("run", assistant.client, app_token, assistant.identity)
            if problems:
                raise SettingsError("\n".join(problems))
            # Not `start_async()`: it prints Bolt's boot message to stdout, which is the trace's.
            await handler.connect_async()
            started = True
            print("assistant run: connected to Slack over Socket Mode", file=sys.stderr, flush=True)
            await asyncio.Event().wait()  # until a signal
        finally:
            stopping.set()  # a signal from here on changes nothing
            # Events stop coming first; then the runs are ended and the parts closed.
            await handler.close_async()
            await assistant.close()
            connection_log.close()
            if fresh is not None and not started:
                # A start that never connected (a token Slack refuses) leaves no store it
                # made behind: no event comes before the connection, so it holds no one's.
                remove_sqlite_file(fresh)


def run(settings: Settings) -> None:
    check_telemetry()  # a protocol OTEL_* asks for that cannot be used: one line, status 2
    asyncio.run(run_socket_mode(settings))
