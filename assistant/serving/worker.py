"""The worker role (docs/architecture.md#ingress-and-workers): `assistant worker` runs the
threads owed an answer and serves no HTTP; `assistant serve --runs off` (the ingress)
acknowledges and records the events.

A worker is the app's own runs: the same `RunScheduler`, leases and agent as `serve`, built by
the same `create_assistant`, resuming owed threads at start and every half lease. What it
adds is the wake-up: it listens for the notification the ingress's write sends
(`context/storage/wakeups.py`) and asks the scheduler for that thread at once; each time it
starts listening it sweeps too, since what was sent before is lost. Only PostgreSQL carries
those notifications, and only a shared server lets processes on several machines meet, so
the roles need it (`ROLES_NEED_POSTGRESQL`)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TextIO

from sqlalchemy import URL

from assistant.app import Assistant, create_assistant
from assistant.serving.signals import stopped_by_signals
from assistant.settings.environment import Settings, SettingsError
from assistant.slack.bot_identity import BotIdentity
from assistant.slack.installs import installed_workspaces
from assistant.slack.tokens import refused_bot_token
from assistant.telemetry.setup import check as check_telemetry
from context.storage import database_url, has_store, open_store
from context.storage.wakeups import listen_for_owed

ROLES_NEED_POSTGRESQL = (
    "the ingress and worker roles share their work through PostgreSQL (its LISTEN/NOTIFY "
    "wakes the workers); DATABASE_URL is SQLite, where `assistant serve` alone both "
    "acknowledges and answers"
)


def token_source_problem(settings: Settings) -> str | None:
    """Why a process with one SLACK_BOT_TOKEN must not serve this database, if it must not:
    the database holds installs through OAuth, whose threads that token cannot answer."""
    if settings.slack.bot_token is None:
        return None
    # Read only if there: a store this check made would be made before the token is checked.
    if not has_store(database_url(settings.storage.database_url)):
        return None
    store = open_store(settings.storage.database_url)
    try:
        installed = installed_workspaces(store)
    finally:
        store.close()
    if not installed:
        return None
    return (
        f"SLACK_BOT_TOKEN: this database holds installs through OAuth ({installed} "
        "workspaces), whose threads one bot token cannot answer: set SLACK_CLIENT_ID and "
        "SLACK_CLIENT_SECRET instead, as the processes that installed them have"
    )


def split_roles_problem(settings: Settings) -> str | None:
    """Why the ingress and worker roles cannot run on these settings' store, if they cannot."""
    if database_url(settings.storage.database_url).get_backend_name() != "postgresql":
        return ROLES_NEED_POSTGRESQL
    return None


async def run_worker(settings: Settings, trace: TextIO | None = None) -> None:
    """Run owed threads until SIGTERM or SIGINT; then end the runs under way as `serve` does
    (`RunScheduler.stop`: what they answer stays owed, for another worker)."""
    identity = None
    if settings.slack.bot_token is not None:  # else each workspace's token is its installation's
        # Checked before any run starts: the token's workspace is the one whose threads this
        # worker answers (`RunScheduler.answers_team`).
        token = settings.slack.bot_token.get_secret_value()
        identity = BotIdentity(token)
        problems = await refused_bot_token("worker", token, settings.slack.api_base, identity)
        if problems:
            raise SettingsError("\n".join(problems))
    assistant = create_assistant(settings, trace, identity=identity)
    assistant.check_mcp_servers(sys.stderr)
    with stopped_by_signals() as stopping:
        url = database_url(settings.storage.database_url)
        listener = asyncio.create_task(answer_owed(assistant, url))
        try:
            await asyncio.Event().wait()  # until a signal
        finally:
            stopping.set()
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener
            await assistant.close()


async def answer_owed(assistant: Assistant, url: URL) -> None:
    """Until cancelled: each thread the ingress records as owed is asked of the scheduler at
    once (PostgreSQL's notification), and a sweep runs each time listening (re)starts, since
    what was sent meanwhile is lost. The worker's work without its signals, which only the
    main thread may handle (the tests run a worker in process: tests/bolt_tier.py)."""
    scheduler = assistant.scheduler
    assert scheduler is not None

    def listening() -> None:
        print("assistant worker: listening for requests", file=sys.stderr, flush=True)
        scheduler.sweep_now()

    await listen_for_owed(url, scheduler.request, listening)


def work(settings: Settings) -> None:
    # As `serve` does: a store that cannot be opened is one line (StoreUnavailable) and
    # status 2, before anything starts.
    open_store(settings.storage.database_url).close()
    check_telemetry()
    asyncio.run(run_worker(settings))
