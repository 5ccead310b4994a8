"""A bare Bolt app, for `bench.ack` to measure beside ours: `AsyncApp` with one listener that
does nothing, behind the same Starlette + uvicorn stack as `assistant serve`
(`assistant/serving/http.py`), in a process of its own. What it acknowledges per second is the
most the framework gives one Python process; ours records each message before its ack.

Given a database, it also writes each `app_mention` before its ack, and nothing more: the
event's body in one INSERT, its own transaction, in a thread (SQLAlchemy, as our store
writes). What it acknowledges per second is the most any ingress reaches that records a
mention before acknowledging it (`bench.ingress`).

`python -m bench.bare_app PORT SLACK_API_URL [DATABASE_URL]` serves it on 127.0.0.1:PORT.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Self

import uvicorn
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import Column, Engine, MetaData, Table, Text, create_engine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from assistant.fakes import FakeSlack, ids
from bench.server import PORT_ATTEMPTS, STARTUP_TIMEOUT, cpu_seconds, free_port, taken_meanwhile
from tests.cli import ROOT
from tests.process import _Output, clean_env

INBOX = Table(
    "bench_inbox", MetaData(), Column("event_id", Text, primary_key=True), Column("body", Text)
)


def keep(engine: Engine, body: dict[str, Any]) -> None:
    """The event's body in one INSERT, its own transaction."""
    with engine.begin() as connection:
        connection.execute(INBOX.insert(), {"event_id": body["event_id"], "body": json.dumps(body)})


def create_bare_app(api_url: str, database_url: str | None = None) -> Starlette:
    @asynccontextmanager
    async def lifespan(web: Starlette) -> AsyncIterator[None]:
        # As assistant.app builds ours: a client with the bot token, the signing secret, and
        # the listener run before the ack.
        app = AsyncApp(
            client=AsyncWebClient(token=ids.BOT_TOKEN, base_url=api_url),
            signing_secret=ids.SIGNING_SECRET,
            process_before_response=True,
        )

        if database_url is not None:
            engine = create_engine(database_url)
            INBOX.metadata.create_all(engine)

            @app.event("app_mention")
            async def write(body: dict[str, Any]) -> None:
                await asyncio.to_thread(keep, engine, body)

        @app.event(re.compile(".*"))
        async def ignore() -> None:
            return None

        web.state.handler = AsyncSlackRequestHandler(app)
        yield

    async def slack_events(request: Request) -> Response:
        response: Response = await request.app.state.handler.handle(request)
        return response

    return Starlette(
        routes=[Route("/slack/events", slack_events, methods=["POST"])], lifespan=lifespan
    )


class BareBoltServer:
    """The bare app in its own process, pointed at `slack` (and writing each mention to
    `database_url`, if given); stopped on exit."""

    def __init__(self, slack: FakeSlack, database_url: str | None = None) -> None:
        database = [database_url] if database_url else []
        for attempt in range(1, PORT_ATTEMPTS + 1):
            self.port = free_port()
            self.process = subprocess.Popen(
                [sys.executable, "-m", "bench.bare_app", str(self.port), slack.api_url, *database],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=clean_env(),
                cwd=ROOT,
            )
            assert self.process.stdout is not None and self.process.stderr is not None
            self.stdout, self.stderr = _Output(self.process.stdout), _Output(self.process.stderr)
            try:
                self.stderr.wait_for(r"Uvicorn running on", timeout=STARTUP_TIMEOUT)
                return
            except BaseException as exc:
                self.__exit__(None, None, None)
                taken = isinstance(exc, AssertionError) and taken_meanwhile(self.stderr.text)
                if attempt == PORT_ATTEMPTS or not taken:
                    raise

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.process.pid)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STARTUP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()  # never left running
                self.process.wait()
                raise


if __name__ == "__main__":
    # The same server settings as `assistant serve` (assistant/serving/http.py `serve`).
    uvicorn.run(
        create_bare_app(sys.argv[2], *sys.argv[3:4]),
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="info",
    )
