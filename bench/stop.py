"""The stop button (part of `python -m bench stream`): the time from the acknowledgement of
`agent_session_stopped` to the last Slack call of the run it stopped, while that run streams
an answer: with the run in the process Slack told (SQLite), and in another process on the
same PostgreSQL database (docs/architecture.md#the-stop-button: the bound).
"""

from __future__ import annotations

import http.client
import tempfile
import time
from pathlib import Path
from typing import Any

from assistant.fakes import FakeOpenAI, FakeSlack
from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.stream import Streamed, StreamStyle
from assistant.fakes.requests import event_callback, signed_event_request
from assistant.run.stopping.watch import STOP_CHECK_SECONDS
from bench.report import Figure, ms
from bench.server import AppServer
from bench.store import scratch_postgres
from tests.harness import mention

ANSWER = " ".join(["the team can meet at noon near the old market hall"] * 60)
IN_PROCESS_GOAL = 1.0
ACROSS_GOAL = STOP_CHECK_SECONDS + 1.0  # the check's interval, then the read and the clean-up


def figures(smoke: bool) -> list[Figure]:
    found: list[Figure] = []
    name = "stop button: its ack to the stopped run's last Slack call"
    with (
        FakeSlack(agent=True) as slack,
        FakeOpenAI() as model,
        tempfile.TemporaryDirectory() as work,
    ):
        (Path(work) / "one").mkdir()
        with AppServer(slack, model, Path(work) / "one", ASSISTANT_STREAM="auto") as app:
            took = _stop(slack, model, app, app)
        goal = f"< {ms(IN_PROCESS_GOAL)}"
        found.append(Figure(f"{name}, same process", ms(took), goal, took < IN_PROCESS_GOAL))
        if smoke:
            return found
        with scratch_postgres() as url:
            env = {"ASSISTANT_STREAM": "auto", "DATABASE_URL": url}
            (Path(work) / "a").mkdir()
            (Path(work) / "b").mkdir()
            with (
                AppServer(slack, model, Path(work) / "a", **env) as running,
                AppServer(slack, model, Path(work) / "b", **env) as told,
            ):
                took = _stop(slack, model, running, told)
        goal = f"< {ms(ACROSS_GOAL)}"
        found.append(
            Figure(f"{name}, another process (PostgreSQL)", ms(took), goal, took < ACROSS_GOAL)
        )
    return found


def _stop(slack: FakeSlack, model: FakeOpenAI, running: AppServer, told: AppServer) -> float:
    """A streamed answer under way in `running`, stopped through `told`: seconds from the
    stop's acknowledgement to the run's last Slack call."""
    arguments = {"text": ANSWER, "reasoning": "answering"}
    reply = replies.tool_calls(("postMessage", arguments), ("finishRequest", {"reasoning": "d"}))
    model.script(Streamed(reply, StreamStyle(tokens_per_second=50.0)))
    event = mention(slack, "tell me about lunch")
    _post(running, event)
    slack.wait_for_call(
        "chat.appendStream", timeout=60, where=lambda c: c.ok and c.params.get("ts") is not None
    )
    stop = slack.agents.press_stop(event["channel"], event["ts"])
    _post(told, stop)
    acked = time.monotonic()
    # The run's end and the stop's entry each set the session active: the second is last.
    ended = slack.wait_for_call(
        "agents.sessions.setStatus",
        count=2,
        timeout=60,
        where=lambda c: c.params.get("thread_ts") == event["ts"] and c.params["status"] == "active",
    )
    mine = [c for c in slack.calls if c.at >= acked and c.method != "agents.sessions.setStatus"]
    last = max([ended[-1].at, *(c.at for c in mine)])
    return last - acked


def _post(app: AppServer, event: dict[str, Any]) -> None:
    body, headers = signed_event_request(event_callback(event))
    connection = http.client.HTTPConnection("127.0.0.1", app.port, timeout=10)
    try:
        connection.request("POST", "/slack/events", body=body, headers=headers)
        assert connection.getresponse().status == 200
    finally:
        connection.close()
