"""Two `assistant serve` processes on one PostgreSQL database (issue: reliability): Slack
delivers every event twice, once to each process, and still every mention is recorded once
and answered once, and every log stays contiguous; installed through OAuth, the two refresh a
workspace's expiring token once between them (issue 32)."""

from __future__ import annotations

import asyncio
import http.client
import threading
import time

import aiohttp
from sqlalchemy import create_engine, text

from assistant.fakes import FakeOpenAI, FakeSlack
from assistant.fakes.requests import event_callback, signed_event_request
from assistant.fakes.slack.oauth import EXPIRES_IN
from bench import conversation
from bench.model import AnsweringModel
from bench.server import AppServer
from context.storage import open_store
from tests.app.test_installs import (
    CHANNEL_A,
    CLIENT_ID,
    CLIENT_SECRET,
    TEAM_A,
    bot_of,
    install,
    refreshes_of,
)
from tests.harness import Response, mention, script_answers

# Ten threads of ten mentions each: every thread's mentions race across the two processes
# (each event's two deliveries at once, 16 events in flight), as 50 threads did at five
# times the suite's time; the benchmarks measure the load (bench/).
THREADS, PER_THREAD = 10, 10
IN_FLIGHT = 16  # events whose two deliveries are under way at once
TIMEOUT = 240.0


async def deliver_twice(urls: list[str], events: list[dict]) -> list[int]:
    """Each event to every process at the same moment (its two deliveries race); statuses."""
    statuses: list[int] = []
    gate = asyncio.Semaphore(IN_FLIGHT)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:

        async def post(url: str, payload: dict) -> None:
            body, headers = signed_event_request(payload)
            async with session.post(f"{url}/slack/events", data=body, headers=headers) as r:
                await r.read()
                statuses.append(r.status)

        async def both(number: int, event: dict) -> None:
            payload = event_callback(event)  # one event id, as Slack's deliveries share
            order = urls if number % 2 == 0 else urls[::-1]  # round robin: who gets it first
            async with gate:
                await asyncio.gather(*(post(url, payload) for url in order))

        await asyncio.gather(*(both(n, e) for n, e in enumerate(events)))
    return statuses


def nothing_owed(database_url: str) -> int:
    store = open_store(database_url)
    try:
        deadline = time.monotonic() + TIMEOUT
        while (owed := sum(len(store.pending(s.key)) for s in store.threads())) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.02)  # another process's database: no event to wait on
        return owed
    finally:
        store.close()


def test_two_processes_on_postgresql_answer_each_mention_once(postgres_url, tmp_path):
    model = AnsweringModel()
    with FakeSlack() as slack, FakeOpenAI(default=model) as fake:
        made = conversation.mentions(slack, THREADS, PER_THREAD)
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        with (
            AppServer(slack, fake, tmp_path / "a", DATABASE_URL=postgres_url) as first,
            AppServer(slack, fake, tmp_path / "b", DATABASE_URL=postgres_url) as second,
        ):
            statuses = asyncio.run(deliver_twice([first.url, second.url], [m.event for m in made]))
            for mention in made:  # each wait returns at once when the answer is there
                slack.wait_for_call(
                    "chat.postMessage",
                    timeout=TIMEOUT,
                    where=lambda call, label=mention.label: label in call.params.get("text", ""),
                )
            assert nothing_owed(postgres_url) == 0
            # Both processes did part of the work.
            assert "👤" in first.process.stdout.text and "👤" in second.process.stdout.text

    assert statuses == [200] * (2 * len(made))
    assert conversation.recorded_once(postgres_url, made) == len(made)
    assert conversation.answered_once(slack, made) == len(made)
    assert conversation.valid_logs(postgres_url) == (THREADS, THREADS)


class Remote:
    """An app process over HTTP, as `tests.harness.RunningApp` asks it (the install helpers)."""

    def __init__(self, server: AppServer) -> None:
        self.port = server.port

    def request(self, method: str, path: str, body: bytes = b"", headers=None) -> Response:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            answer = connection.getresponse()
            return Response(answer.status, answer.read(), dict(answer.getheaders()))
        finally:
            connection.close()

    def send_event(self, event: dict, team: str) -> int:
        body, headers = signed_event_request(event_callback(event, team_id=team))
        return self.request("POST", "/slack/events", body, headers).status


def advisory_lock_waiters(url: str) -> int:
    """Sessions of this database waiting for an advisory lock (a refresh under way elsewhere)."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(
                text(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                    " AND database = (SELECT oid FROM pg_database"
                    " WHERE datname = current_database())"
                )
            ).scalar_one()
    finally:
        engine.dispose()


def test_two_processes_refresh_a_workspace_token_once(postgres_url, tmp_path, slack, model):
    """Slack takes a refresh token once: two processes that both see the token expiring, at
    the same moment, refresh it once between them, and both events are recorded and answered
    (before, the second refresh was refused, and its event answered 200 and lost)."""
    # SLACK_BOT_TOKEN empty: unset (bench.server's processes have one by default).
    start_oauth = {"SLACK_BOT_TOKEN": "", "SLACK_CLIENT_ID": CLIENT_ID}
    start_oauth["SLACK_CLIENT_SECRET"] = CLIENT_SECRET
    slack.oauth_app(CLIENT_ID, CLIENT_SECRET)
    workspace = slack.add_workspace(TEAM_A, channels=(CHANNEL_A,), rotating=True)
    workspace.expires_in = 60  # within the 120 minutes: refreshed on its next use
    script_answers(model, 2)
    events = [mention(slack, f"hello {n}", channel=CHANNEL_A) for n in (1, 2)]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with (
        AppServer(slack, model, tmp_path / "a", DATABASE_URL=postgres_url, **start_oauth) as a,
        AppServer(slack, model, tmp_path / "b", DATABASE_URL=postgres_url, **start_oauth) as b,
    ):
        install(Remote(a), slack, TEAM_A)
        workspace.expires_in = EXPIRES_IN
        first, second = slack.hold("oauth.v2.access"), slack.hold("oauth.v2.access")
        statuses: dict[int, int] = {}

        def send(n: int, server: AppServer) -> None:
            statuses[n] = Remote(server).send_event(events[n], TEAM_A)

        senders = [threading.Thread(target=send, args=(n, s)) for n, s in enumerate((a, b))]
        senders[0].start()
        first.wait_reached(TIMEOUT)  # process a refreshes
        senders[1].start()
        # Until process b wants the token too: it refreshes as well (the race), or waits
        # for a's refresh (the advisory lock).
        deadline = time.monotonic() + TIMEOUT
        while not (second.reached or advisory_lock_waiters(postgres_url)):
            assert time.monotonic() < deadline, "process b never asked for the token"
            time.sleep(0.05)  # another process's state: nothing to wait on
        first.release()
        second.release()
        for sender in senders:
            sender.join(TIMEOUT)
        slack.wait_for_call("reactions.remove", count=2, timeout=TIMEOUT)
        assert nothing_owed(postgres_url) == 0

    assert statuses == {0: 200, 1: 200}
    refreshes = refreshes_of(slack)
    assert len(refreshes) == 1 and refreshes[0].ok
    posts = slack.calls_to("chat.postMessage")
    assert len(posts) == 2 and {c.token for c in posts} == {workspace.tokens[-1]}
    assert bot_of(postgres_url, TEAM_A).bot_token == workspace.tokens[-1]
