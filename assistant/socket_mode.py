"""Socket Mode (SPEC §7): events over a websocket, no public URL needed."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from typing import TextIO

import aiohttp
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_sdk.errors import SlackApiError

from assistant.app import Assistant, create_assistant
from assistant.settings import Settings, SettingsError

# What Slack answers for a token that will never work; retrying cannot help.
REFUSED = {
    "invalid_auth",
    "not_authed",
    "not_allowed_token_type",
    "account_inactive",
    "token_revoked",
    "token_expired",
}


async def run_socket_mode(settings: Settings, trace: TextIO | None = None) -> None:
    assert settings.slack_app_token is not None
    app_token = settings.slack_app_token.get_secret_value()
    assistant = create_assistant(settings, trace)
    handler = AsyncSocketModeHandler(assistant.app, app_token, web_client=assistant.client)
    # Process managers (Procfile platforms, systemd, Docker) stop a worker with SIGTERM: end
    # like Ctrl-C does, letting the runs under way finish, instead of dying mid-answer.
    task = asyncio.current_task()
    assert task is not None
    stopping = asyncio.Event()

    def stop() -> None:
        stopping.set()
        task.cancel()

    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):  # Windows, or not main thread
        loop.add_signal_handler(signal.SIGTERM, stop)
    try:
        # slack-sdk retries a refused token forever, a traceback every few seconds: check first.
        await _check_tokens(assistant, app_token)
        # Not `start_async()`: it prints Bolt's boot message to stdout, which is the trace's.
        await handler.connect_async()
        print("assistant run: connected to Slack over Socket Mode", file=sys.stderr, flush=True)
        await asyncio.Event().wait()  # until a signal
    except asyncio.CancelledError:
        if not stopping.is_set():
            raise
        task.uncancel()
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGTERM)
        await handler.close_async()
        await assistant.close()


async def _check_tokens(assistant: Assistant, app_token: str) -> None:
    problems = []
    checks = (
        ("SLACK_BOT_TOKEN", assistant.client.auth_test),
        ("SLACK_APP_TOKEN", lambda: assistant.client.apps_connections_open(app_token=app_token)),
    )
    for name, check in checks:
        try:
            await check()
        except SlackApiError as exc:
            error = exc.response.get("error")
            if error in REFUSED:
                problems.append(f"{name}: refused by Slack ({error})")
        except (aiohttp.ClientError, TimeoutError):
            pass  # Slack unreachable for now: connecting retries until it is back
    if problems:
        raise SettingsError("\n".join(problems))


def run(settings: Settings) -> None:
    asyncio.run(run_socket_mode(settings))
