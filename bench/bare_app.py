"""A bare Bolt app, for `bench.ack` to measure beside ours: `AsyncApp` with one listener that
does nothing, behind the same Starlette + uvicorn stack as `assistant serve`
(`assistant/serving/http.py`), in a process of its own. What it acknowledges per second is the
most the framework gives one Python process; ours records each message before its ack.

`python -m bench.bare_app PORT SLACK_API_URL` serves it on 127.0.0.1:PORT.
"""

from __future__ import annotations

import re
import subprocess
import sys
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Self

import uvicorn
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from assistant.fakes import FakeSlack, ids
from bench.server import STARTUP_TIMEOUT, cpu_seconds, free_port
from tests.cli import ROOT
from tests.process import _Output, clean_env


def create_bare_app(api_url: str) -> Starlette:
    @asynccontextmanager
    async def lifespan(web: Starlette):  # type: ignore[no-untyped-def]
        # As assistant.app builds ours: a client with the bot token, the signing secret, and
        # the listener run before the ack.
        app = AsyncApp(
            client=AsyncWebClient(token=ids.BOT_TOKEN, base_url=api_url),
            signing_secret=ids.SIGNING_SECRET,
            process_before_response=True,
        )

        @app.event(re.compile(".*"))
        async def ignore() -> None:
            return None

        web.state.handler = AsyncSlackRequestHandler(app)
        yield

    async def slack_events(request: Request) -> Response:
        return await request.app.state.handler.handle(request)

    return Starlette(
        routes=[Route("/slack/events", slack_events, methods=["POST"])], lifespan=lifespan
    )


class BareBoltServer:
    """The bare app in its own process, pointed at `slack`; stopped on exit."""

    def __init__(self, slack: FakeSlack) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.bare_app", str(self.port), slack.api_url],
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
        except BaseException:
            self.__exit__(None, None, None)
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
            self.process.wait(STARTUP_TIMEOUT)


if __name__ == "__main__":
    # The same server settings as `assistant serve` (assistant/serving/http.py `serve`).
    uvicorn.run(
        create_bare_app(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]), log_level="info"
    )
