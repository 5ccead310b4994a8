"""Chaos: mentions while `assistant serve` is killed (SIGKILL) at random moments and restarted.

`python -m bench chaos`. 100 mentions over 20 threads (5 rounds of one mention per thread),
sent one at a time with random gaps like Slack would: a delivery that gets no 200 (the process
was dead, or died mid-request) is delivered again, with Slack's retry header, until one does.
Meanwhile the app is killed with SIGKILL every 0.5 to 2.5 seconds, 10 times, and restarted on
the same SQLite file; every model call takes 0.2 to 0.6 seconds, so kills land mid-run, between
a post being recorded and being sent, between a reply and its finishRequest.

After the last restart: every mention must be answered exactly once (one chat.postMessage
naming it, in its own thread), recorded exactly once, every log must validate, and nothing
must be owed an answer.
"""

from __future__ import annotations

import http.client
import random
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from assistant.fakes import Call, FakeOpenAI, FakeSlack
from assistant.fakes.requests import event_callback, signed_event_request
from bench import conversation
from bench.model import AnsweringModel
from bench.report import Figure
from bench.server import AppServer
from context.storage import open_store

FULL = {"threads": 20, "per_thread": 5, "kills": 10}
SMOKE = {"threads": 2, "per_thread": 2, "kills": 1}
LEASE_SECONDS = "2"  # how long a killed process's threads stay locked
TIMEOUT = 180.0


class Sender(threading.Thread):
    """Delivers each event until the app answers 200, retrying as Slack does."""

    def __init__(self, events: list[dict[str, Any]], rng: random.Random) -> None:
        super().__init__(daemon=True)
        self.payloads = [event_callback(e) for e in events]
        self.rng = rng
        self.url = ""
        self.url_changed = threading.Condition()
        self.redeliveries = 0
        self.error: BaseException | None = None

    def point_at(self, url: str) -> None:
        with self.url_changed:
            self.url = url
            self.url_changed.notify_all()

    def run(self) -> None:
        try:
            for payload in self.payloads:
                self._deliver(payload)
                time.sleep(self.rng.uniform(0.0, 0.15))  # people do not type in bursts
        except BaseException as exc:  # reported by the main thread
            self.error = exc

    def _deliver(self, payload: dict[str, Any]) -> None:
        attempt = 0
        while True:
            with self.url_changed:
                url = self.url
            body, headers = signed_event_request(payload, retry_num=attempt or None)
            status = _post(url, body, headers)
            if status == 200:
                return
            attempt += 1
            self.redeliveries += 1
            with self.url_changed:  # the app is down: wait for the next one, not a clock
                if self.url == url:
                    self.url_changed.wait(timeout=1.0)


def _post(url: str, body: bytes, headers: dict[str, str]) -> int:
    """The HTTP status, or 0 when the connection failed (the process is dead or dying)."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request("POST", "/slack/events", body=body, headers=headers)
        return connection.getresponse().status
    except OSError:
        return 0
    finally:
        connection.close()


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    rng = random.Random(11)
    model = AnsweringModel(latency=(0.2, 0.6))
    with (
        FakeSlack() as slack,
        FakeOpenAI(default=model) as fake,
        tempfile.TemporaryDirectory() as workdir,
        ExitStack() as started_apps,  # each stopped on the way out, whatever happened
    ):
        made = conversation.mentions(slack, size["threads"], size["per_thread"])
        sender = Sender([m.event for m in made], rng)
        start: Callable[[], AppServer] = lambda: started_apps.enter_context(  # noqa: E731
            AppServer(slack, fake, Path(workdir), ASSISTANT_RUN_LEASE_SECONDS=LEASE_SECONDS)
        )
        started = time.perf_counter()
        app = start()
        sender.point_at(app.url)
        sender.start()
        for _ in range(size["kills"]):
            time.sleep(rng.uniform(0.5, 2.5))  # a random moment: the point of the exercise
            app.process.process.kill()
            app.process.process.wait()
            app = start()
            sender.point_at(app.url)
        sender.join(TIMEOUT)
        if sender.error is not None or sender.is_alive():
            raise RuntimeError(f"the sender did not finish: {sender.error}")
        for mention in made:  # each wait returns at once when the answer is already there

            def answered(call: Call, label: str = mention.label) -> bool:
                return label in call.params.get("text", "")

            slack.wait_for_call("chat.postMessage", timeout=TIMEOUT, where=answered)
        owed = _wait_nothing_owed(app.database_url)
        app.stop()  # graceful: whatever run is still going ends first
        elapsed = time.perf_counter() - started
        once = conversation.answered_once(slack, made)
        recorded = conversation.recorded_once(app.database_url, made)
        valid, logs = conversation.valid_logs(app.database_url)
        resumed = _count_resumed_posts(app.database_url)
    total = len(made)
    return [
        Figure(
            "load",
            f"{total} mentions over {size['threads']} threads; {size['kills']} SIGKILLs and "
            f"restarts; model 0.2–0.6 s a call",  # noqa: RUF001
        ),
        Figure("answered exactly once", f"{once}/{total}", "all", once == total),
        Figure("recorded exactly once", f"{recorded}/{total}", "all", recorded == total),
        Figure("logs that validate", f"{valid}/{logs}", "all", valid == logs),
        Figure("owed an answer at the end", str(owed), "0", owed == 0),
        Figure("deliveries repeated (no 200: the app was down)", str(sender.redeliveries)),
        Figure("posts finished by a resumed run", str(resumed)),
        Figure("wall time", f"{elapsed:.1f} s"),
    ]


def _wait_nothing_owed(database_url: str) -> int:
    """Until no thread is owed an answer (a killed run's lease has to expire first)."""
    store = open_store(database_url)
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            owed = sum(len(store.pending(s.key)) for s in store.threads())
            if owed == 0 or time.monotonic() > deadline:
                return owed
            time.sleep(0.2)  # polling another process's database: there is no event to wait on
    finally:
        store.close()


def _count_resumed_posts(database_url: str) -> int:
    store = open_store(database_url)
    try:
        return sum(
            1
            for s in store.threads()
            for e in store.entries(s.key)
            if e.role == "system" and str(e.content).startswith("The process restarted")
        )
    finally:
        store.close()
