"""The real HTTP app (Starlette + Bolt under uvicorn) in a background thread, for end-to-end
tests against the fakes: events go in as signed HTTP requests, as Slack sends them."""

from __future__ import annotations

import asyncio
import http.client
import inspect
import io
import json
import socket
import threading
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from slack_bolt.listener.asyncio_runner import AsyncioListenerRunner

from assistant.app import Assistant
from assistant.fakes import FakeOpenAI, FakeSlack, ids
from assistant.fakes.events.builders import app_mention
from assistant.fakes.openai import responses as replies
from assistant.fakes.requests import event_callback, signed_event_request
from assistant.serving.http import create_web_app
from assistant.serving.web_server import server_config
from assistant.settings.environment import Settings, load_settings
from context.storage import ThreadKey

TIMEOUT = 60  # a wait on a condition: generous, for a busy machine (it ends when it holds)

# The task Bolt (with process_before_response off) runs each listener in, after the ack.
BOLT_LISTENER_TASK = "run_ack_function_asynchronously"
assert BOLT_LISTENER_TASK in inspect.getsource(AsyncioListenerRunner.run), "Bolt changed"


def app_settings(slack: FakeSlack, model: FakeOpenAI, database_url: str, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "slack_bot_token": ids.BOT_TOKEN,
        "slack_signing_secret": ids.SIGNING_SECRET,
        "slack_api_url": slack.api_url,
        "openai_api_key": ids.OPENAI_API_KEY,
        "openai_base_url": model.base_url,
        "openai_max_retries": 0,
        "database_url": database_url,
        # Answers are posted whole unless a test streams them (tests/app/test_streaming.py).
        "assistant_stream": "off",
        # No model check at start: its probe would take a scripted answer (test_check.py).
        "assistant_model_check": "off",
    }
    return load_settings("http", _env_file=None, **{**values, **extra})


@dataclass
class Response:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


class RunningApp:
    """`assistant serve`'s ASGI app on a loopback port; `trace` holds the console output."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.trace = io.StringIO()
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)  # requests wait in the backlog until the server accepts
        self.port = self._sock.getsockname()[1]
        self._web = create_web_app(settings, self.trace)
        # `assistant serve`'s own server settings (limits, timeouts, protocol), on this socket.
        self._server = uvicorn.Server(server_config(self._web, log_level="warning"))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._server.serve(sockets=[self._sock]))

    def start(self) -> RunningApp:
        self._thread.start()
        # Answered once the lifespan has built the assistant (until then it waits in the
        # socket's backlog).
        assert self.request("GET", "/healthz").status == 200
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(TIMEOUT)
        self._sock.close()

    @property
    def assistant(self) -> Assistant:
        assistant: Assistant = self._web.state.assistant
        return assistant

    def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> Response:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return Response(response.status, response.read(), dict(response.getheaders()))
        finally:
            connection.close()

    def send_event(
        self,
        event: dict[str, Any],
        *,
        payload: dict[str, Any] | None = None,
        retry_num: int | None = None,
        signing_secret: str = ids.SIGNING_SECRET,
        timestamp: int | None = None,
    ) -> Response:
        """POST one event to /slack/events, signed as Slack signs it."""
        payload = payload or event_callback(event)
        body, headers = signed_event_request(
            payload, signing_secret=signing_secret, retry_num=retry_num, timestamp=timestamp
        )
        return self.request("POST", "/slack/events", body, headers)

    def wait_idle(self) -> None:
        """Until no run is going or waiting (call once the runs wanted have started)."""
        scheduler = self.assistant.scheduler
        assert scheduler is not None, "an ingress app runs nothing to wait for"
        future = asyncio.run_coroutine_threadsafe(scheduler.wait_idle(), self._loop)
        future.result(TIMEOUT)

    def wait_judged(self) -> None:
        """Until the live judge (ASSISTANT_JUDGE_SAMPLE) has ended what the runs so far
        started (call once those runs have ended: `wait_idle`)."""
        judge = self.assistant.judge
        assert judge is not None, "the app judges no answer: ASSISTANT_JUDGE_SAMPLE is 0"
        asyncio.run_coroutine_threadsafe(judge.wait(), self._loop).result(TIMEOUT)

    def wait_listeners(self) -> None:
        """Until Bolt's listeners for the events sent so far have returned. Bolt acks an event
        first and runs its listener afterwards, so an event that records nothing gives no
        other sign of having been handled."""

        async def listeners() -> None:
            running = [
                task
                for task in asyncio.all_tasks()
                if getattr(task.get_coro(), "__name__", "") == BOLT_LISTENER_TASK
            ]
            await asyncio.gather(*running, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(listeners(), self._loop).result(TIMEOUT)

    def wait_handled(self) -> None:
        """Until the events sent so far are handled and every run they started has ended."""
        self.wait_listeners()
        self.wait_idle()

    def wait_runs_cancelled(self) -> None:
        """Until no run of the app goes on uncancelled (a stop seen, a lease lost): each may
        still be ending what it was doing."""
        run = self.run_task

        async def cancelled() -> None:
            while any(
                getattr(task.get_coro(), "__qualname__", "") == run and not task.cancelling()
                for task in asyncio.all_tasks()
            ):
                await asyncio.sleep(0.01)

        asyncio.run_coroutine_threadsafe(cancelled(), self._loop).result(TIMEOUT)

    @property
    def run_task(self) -> str:
        """The qualified name of the coroutine each run's task runs: the scheduler's `run`
        (`WorkspaceRuns.run`, or telemetry's wrapper of it)."""
        scheduler = self.assistant.scheduler
        assert scheduler is not None, "an app with runs off runs no task"
        return scheduler.run.__qualname__

    def tasks_running(self, qualname: str) -> int:
        """How many of the app's tasks run a coroutine function of that name (e.g.
        `run_task`: the runs still alive, tracked by the scheduler or not)."""

        async def count() -> int:
            return sum(
                1
                for task in asyncio.all_tasks()
                if getattr(task.get_coro(), "__qualname__", "") == qualname
            )

        return asyncio.run_coroutine_threadsafe(count(), self._loop).result(TIMEOUT)

    def agent(self) -> Any:
        """The agent the scheduler runs (`Agent.run`, through `WorkspaceRuns`): with
        SLACK_BOT_TOKEN, the one workspace's, built with the app's one client."""
        # The scheduler's `run` is WorkspaceRuns.run, a bound method (its type says a callable).
        runs = self.assistant.scheduler.run.__self__  # type: ignore[union-attr]
        return runs.agents.for_client(self.assistant.client)

    def log(self, key: ThreadKey) -> list[dict[str, Any]]:
        return [entry.as_dict() for entry in self.assistant.store.entries(key)]


def mention(slack: FakeSlack, text: str, **kwargs: Any) -> dict[str, Any]:
    """A person mentions the bot: the message is in Slack, and this is its event."""
    text = f"<@{ids.BOT_USER_ID}> {text}"
    event = app_mention(text, **kwargs)
    slack.add_message(
        event["channel"],
        ts=event["ts"],
        user=event["user"],
        text=text,
        thread_ts=event.get("thread_ts"),
    )
    return event


def seed(slack: FakeSlack, event: dict[str, Any]) -> dict[str, Any]:
    """A person's message event whose message is also in Slack (as `mention` does)."""
    slack.add_message(
        event["channel"],
        ts=event["ts"],
        user=event["user"],
        text=event["text"],
        thread_ts=event.get("thread_ts"),
    )
    return event


def thread_of(event: dict[str, Any], team: str = ids.TEAM_ID) -> ThreadKey:
    return ThreadKey(team, event["channel"], event.get("thread_ts") or event["ts"])


def prompt_log(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The log a model request carried: its user message's text, parsed."""
    log: list[dict[str, Any]] = json.loads(request["messages"][1]["content"])
    return log


def script_answers(model: FakeOpenAI, count: int = 1) -> None:
    """The model answers `count` mentions, each with a post and finishRequest in one reply."""
    model.script(
        *[
            replies.tool_calls(
                ("postMessage", {"text": "Seen.", "reasoning": "answer"}),
                ("finishRequest", {"reasoning": "done"}),
            )
            for _ in range(count)
        ]
    )


def answered_log(app: RunningApp, slack: FakeSlack, event: dict[str, Any]) -> list[dict[str, Any]]:
    """Send a mention and wait until it is answered; its thread's log."""
    before = len(slack.calls_to("reactions.remove"))
    assert app.send_event(event).status == 200
    slack.wait_for_call("reactions.remove", count=before + 1)
    app.wait_idle()
    return app.log(thread_of(event))


def wait_session(
    slack: FakeSlack, event: dict[str, Any], status: str, count: int = 1, timeout: float = TIMEOUT
) -> None:
    """Until the session of the thread `event` starts was set to `status` `count` times."""
    slack.wait_for_call(
        "agents.sessions.setStatus",
        count=count,
        timeout=timeout,
        where=lambda c: c.params.get("thread_ts") == event["ts"] and c.params["status"] == status,
    )
