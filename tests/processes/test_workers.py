"""Ingress and workers (issue 26, docs/architecture.md#ingress-and-workers): `assistant serve
--runs off` acknowledges and records, `assistant worker` processes answer, on one PostgreSQL,
woken by its NOTIFY; the sweep answers when a notification is lost; a killed worker's thread
is taken over; SQLite keeps the one process that does both."""

from __future__ import annotations

from sqlalchemy import create_engine, text

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from bench import conversation
from bench.load import send_events
from bench.model import AnsweringModel
from bench.server import AppServer, Worker, app_env
from context.entry import UserContent
from context.storage import EntryMeta, database_url, open_store
from tests.harness import thread_of
from tests.process import AssistantProcess, run_assistant
from tests.tcp_proxy import TcpProxy

# Generous, for a busy machine, and still well under the sweep's period (SWEEP_LEASE) where a
# test shows that the NOTIFY woke the workers.
WAKE_TIMEOUT = 120.0
SWEEP_LEASE = "600"  # seconds: a sweep every 300 s


def answer(slack: FakeSlack, model: AnsweringModel, made: list, timeout: float) -> None:
    conversation.wait_answered(slack, model, made, timeout=timeout)
    assert conversation.answered_once(slack, made) == len(made)


def acknowledged(url: str, made: list) -> None:
    assert [d.status for d in send_events(url, [m.event for m in made], 4)] == [200] * len(made)


def holder_pid(postgres_url: str) -> int:
    """The pid in the lease holder's name (host:pid:suffix) of the one leased thread."""
    engine = create_engine(database_url(postgres_url))
    try:
        with engine.connect() as connection:
            holders = connection.scalars(
                text("SELECT run_holder FROM threads WHERE run_holder IS NOT NULL")
            ).all()
    finally:
        engine.dispose()
    assert len(holders) == 1, holders
    return int(holders[0].split(":")[1])


def test_workers_answer_what_the_ingress_records_woken_at_once(postgres_url, tmp_path):
    model = AnsweringModel(one_call=True)
    with FakeSlack() as slack, FakeOpenAI(default=model) as fake:
        made = conversation.mentions(slack, 6, 2)
        # A sweep every 300 s: answers within WAKE_TIMEOUT are the NOTIFY's doing.
        lease = {"ASSISTANT_RUN_LEASE_SECONDS": SWEEP_LEASE}
        with (
            Worker(slack, fake, tmp_path / "w1", postgres_url, **lease) as first,
            Worker(slack, fake, tmp_path / "w2", postgres_url, **lease) as second,
            AppServer(slack, fake, tmp_path, runs="off", DATABASE_URL=postgres_url) as ingress,
        ):
            acknowledged(ingress.url, made)
            answer(slack, model, made, WAKE_TIMEOUT)
            traces = ingress.process.stdout.text, first.process.stdout.text
            second_trace = second.process.stdout.text
    assert "👤" in traces[0] and "postMessage" not in traces[0]  # recorded, never answered
    assert "postMessage" in traces[1] + second_trace
    assert conversation.recorded_once(postgres_url, made) == len(made)


def test_a_killed_worker_s_thread_is_answered_once_by_another(postgres_url, tmp_path):
    model = AnsweringModel(one_call=True)
    with FakeSlack() as slack, FakeOpenAI(default=model) as fake:
        made = conversation.mentions(slack, 1, 1)
        lease = {"ASSISTANT_RUN_LEASE_SECONDS": "3"}
        workers = [Worker(slack, fake, tmp_path / f"w{n}", postgres_url, **lease) for n in (1, 2)]
        try:
            with AppServer(slack, fake, tmp_path, runs="off", DATABASE_URL=postgres_url) as web:
                model.hold_replies()
                acknowledged(web.url, made)
                fake.wait_for_requests(1)  # a worker is mid-run, waiting on the model
                holder = holder_pid(postgres_url)
                (killed,) = [w for w in workers if w.pid == holder]
                killed.kill()
                model.stop_holding()
                model.release_all()  # the killed worker's call: nobody reads its answer now
                # Its :eyes: stays (killed before removing it): the survivor's run ends with
                # removing it once.
                slack.wait_for_call("reactions.remove", timeout=30)
                assert conversation.answered_once(slack, made) == 1
            (survivor,) = [w for w in workers if w is not killed]
            assert "postMessage" in survivor.process.stdout.text
            assert len(fake.requests) == 2  # the killed run's call, and the survivor's
        finally:
            for worker in workers:
                worker.__exit__(None, None, None)


def test_with_the_notification_lost_the_sweep_answers(postgres_url, tmp_path):
    """The worker never hears a NOTIFY: its sweep (every half lease) is all that can answer.
    How soon is the sweep's own period (`RunScheduler._sweep`), not measured here: a busy
    machine would make any bound on wall time a coin toss."""
    model = AnsweringModel(one_call=True)
    period = 2.0  # the sweep's: half the lease
    with (
        FakeSlack() as slack,
        FakeOpenAI(default=model) as fake,
        TcpProxy() as proxy,
    ):
        made = conversation.mentions(slack, 1, 1)
        # The worker's database through the proxy, which never lets its LISTEN through: it
        # hears no notification, ever; its store works as usual.
        proxy.cut_on(b"LISTEN", every=True)
        proxied = database_url(postgres_url).set(port=proxy.port)
        env = app_env(
            slack,
            fake,
            proxied.render_as_string(hide_password=False),
            ASSISTANT_RUN_LEASE_SECONDS=str(2 * period),
        )
        (tmp_path / "w").mkdir()
        with (
            AssistantProcess("worker", env=env, cwd=tmp_path / "w") as worker,
            AppServer(slack, fake, tmp_path, runs="off", DATABASE_URL=postgres_url) as ingress,
        ):
            worker.stderr.wait_for(r"listening for threads owed an answer failed")
            acknowledged(ingress.url, made)
            answer(slack, model, made, timeout=period + WAKE_TIMEOUT)
            assert worker.stop() == 0  # SIGTERM: a clean stop, as `serve` and `run`
    assert "listening for requests" not in worker.stderr.text
    assert proxy.statements_cut >= 1


def test_the_ingress_runs_nothing_even_what_is_owed(postgres_url, tmp_path):
    model = AnsweringModel(one_call=True)
    with FakeSlack() as slack, FakeOpenAI(default=model) as fake:
        earlier, made = conversation.mentions(slack, 2, 1)
        # Owed before the ingress starts, as a crashed process leaves it: `serve` would
        # resume it at once.
        store = open_store(postgres_url)
        try:
            key = thread_of(earlier.event)
            store.append(key, "You're Aya.", "2025-04-04T12:33:00Z")
            store.append(
                key,
                UserContent(userid=f"<@{ids.USER_ID}>", text=earlier.event["text"]),
                "2025-04-04T12:33:01Z",
                EntryMeta(slack_ts=earlier.event["ts"], wants_answer=True),
            )
        finally:
            store.close()
        with AppServer(slack, fake, tmp_path, runs="off", DATABASE_URL=postgres_url) as ingress:
            acknowledged(ingress.url, [made])
            assert fake.requests == []  # recorded and acknowledged, nothing run
            with Worker(slack, fake, tmp_path / "w", postgres_url):
                answer(slack, model, [earlier, made], timeout=WAKE_TIMEOUT)
            trace = ingress.process.stdout.text
    assert "postMessage" not in trace
    assert len(fake.requests) == 2  # one call each, all the worker's


def test_sqlite_keeps_one_process_that_acknowledges_and_answers(tmp_path):
    model = AnsweringModel(one_call=True)
    with FakeSlack() as slack, FakeOpenAI(default=model) as fake:
        made = conversation.mentions(slack, 2, 1)
        with AppServer(slack, fake, tmp_path) as app:
            acknowledged(app.url, made)
            answer(slack, model, made, timeout=30)
            assert "postMessage" in app.process.stdout.text
        # The split roles need PostgreSQL: one line each, status 2, nothing started.
        env = app_env(slack, fake, f"sqlite:///{tmp_path / 'app.db'}")
        for args in (("serve", "--runs", "off"), ("worker",)):
            result = run_assistant(*args, env=env, cwd=tmp_path)
            assert result.returncode == 2
            assert result.stderr.count("\n") == 1, result.stderr
            assert "PostgreSQL" in result.stderr and "SQLite" in result.stderr
