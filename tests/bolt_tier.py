"""The Bolt tier: the app `assistant serve` builds, without its web server. Each request goes
to its Bolt app in process, as Bolt's own tests hand requests to an app
(`AsyncApp.async_dispatch` with an `AsyncBoltRequest`); Bolt checks its signature; every Web
API and model call still goes to the fakes over real HTTP. For tests of how a request is
handled (listeners, signatures, acks): a test module says so with `pytestmark =
pytest.mark.listeners`, and its `app` and `make_app` are this one (tests/conftest.py). What the
web server itself does (the request guard, /healthz, the OAuth pages, connection limits) is
tested through `RunningApp`. An ingress and a worker run in process too (`role`): the
processes are not the point of what they do together."""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Callable, Coroutine
from datetime import datetime
from typing import Any, Literal, TypeVar

from slack_bolt.request.async_request import AsyncBoltRequest

from assistant.app import Assistant, create_assistant
from assistant.run.core.spend import utc_now
from assistant.serving.worker import answer_owed
from assistant.settings.environment import Settings
from context.storage import database_url
from tests.harness import TIMEOUT, Response, RunningApp

T = TypeVar("T")
# What the app does with the events it is given, as `assistant serve` (answers them),
# `assistant serve --runs off` (the ingress: records them, runs nothing) or `assistant
# worker` (runs what an ingress recorded, woken by PostgreSQL's notification) does.
Role = Literal["serve", "ingress", "worker"]

EVENTS_PATH = "/slack/events"  # the one path served by Bolt's dispatch


class DispatchedApp(RunningApp):
    """`RunningApp`'s face (send_event, the waits, the log) over the Bolt app in process; its
    event loop runs in a background thread, as the server's does."""

    def __init__(
        self, settings: Settings, role: Role = "serve", clock: Callable[[], datetime] = utc_now
    ) -> None:  # not super's
        self.settings = settings
        self.role = role
        self.clock = clock  # the spend limits' (docs/operations.md#spend-limits)
        self.trace = io.StringIO()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._built: Assistant | None = None
        self._listener: asyncio.Task[None] | None = None

    def start(self) -> DispatchedApp:
        self._thread.start()

        async def build() -> Assistant:  # inside the loop that serves it, as the lifespan does
            assistant = create_assistant(
                self.settings, self.trace, runs=self.role != "ingress", clock=self.clock
            )
            if self.role == "worker":
                url = database_url(self.settings.storage.database_url)
                self._listener = asyncio.create_task(answer_owed(assistant, url))
            return assistant

        self._built = self._call(build())
        return self

    def stop(self) -> None:
        if self._loop.is_closed():  # stopped already: a test may stop its app itself
            return
        if self._listener is not None:  # as `assistant worker` stops: listening first
            self._listener.cancel()
            self._call(asyncio.wait([self._listener]))
        if self._built is not None:
            self._call(self._built.close())
        self._call(_cancel_the_rest())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(TIMEOUT)
        self._loop.close()

    @property
    def assistant(self) -> Assistant:
        assert self._built is not None, "the app was not started"
        return self._built

    def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> Response:
        assert (method, path) == ("POST", EVENTS_PATH), f"{method} {path}: use RunningApp"

        async def dispatch() -> Response:
            request = AsyncBoltRequest(body=body.decode("utf-8"), headers=dict(headers or {}))
            # What `assistant serve`'s route adds: when the request arrived.
            request.context["received_at"] = asyncio.get_running_loop().time()
            answer = await self.assistant.app.async_dispatch(request)
            return Response(answer.status, answer.body.encode(), answer.first_headers())

        return self._call(dispatch())

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(TIMEOUT)


async def _cancel_the_rest() -> None:
    """What the app left running (a retried auth.test of an app whose Slack is unreachable)
    cancelled, as `asyncio.run` does when `assistant serve` ends: not left pending in a closed
    loop ("Task was destroyed but it is pending")."""
    rest = asyncio.all_tasks() - {asyncio.current_task()}
    for task in rest:
        task.cancel()
    await asyncio.gather(*rest, return_exceptions=True)
