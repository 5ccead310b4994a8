"""One run per thread, even when the database blips: a run whose lease renewal fails, or that
stalled past its lease, stops before it posts; its request stays owed and is answered once,
by this process or by another on the same database.

PostgreSQL's connections are cut through `tests.tcp_proxy.TcpProxy`; the lease is short so
that a renewal falls while the model's answer is held."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from assistant.fakes.openai import responses as replies
from tests.harness import TIMEOUT, RunningApp, app_settings, thread_of
from tests.harness import mention as say
from tests.tcp_proxy import TcpProxy

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

LEASE_SECONDS = 2
ANSWER = "The café downstairs."


@pytest.fixture
def proxy() -> Iterator[TcpProxy]:
    with TcpProxy() as running:
        yield running


@pytest.fixture
def start_app(slack, model) -> Iterator[Any]:
    """Start an app on a database URL (stopped at the end of the test)."""
    started: list[RunningApp] = []

    def start(url: str) -> RunningApp:
        settings = app_settings(slack, model, url, assistant_run_lease_seconds=LEASE_SECONDS)
        started.append(RunningApp(settings).start())
        return started[-1]

    yield start
    for app in started:
        app.stop()


def through(proxy: TcpProxy, url: str) -> str:
    return make_url(url).set(port=proxy.port).render_as_string(hide_password=False)


def answer_and_finish(text: str) -> replies.Completion:
    return replies.tool_calls(
        ("postMessage", {"text": text, "reasoning": "answer"}),
        ("finishRequest", {"reasoning": "done"}),
    )


def posted(slack) -> list[str]:
    return [c.params["text"] for c in slack.calls_to("chat.postMessage") if c.ok]


def held_reply(model) -> replies.Hold:
    """The first model call waits (its answer would be posted if ever acted on); any later
    call, a resumed run's, gets the answer."""
    held = replies.hold(answer_and_finish("An answer from a run that lost its lease."))
    model.script(held)
    model.default = answer_and_finish(ANSWER)
    return held


def test_a_renewal_the_database_cannot_answer_stops_the_run_and_one_answer_is_posted(
    start_app, slack, model, postgres_url, proxy
):
    app = start_app(through(proxy, postgres_url))
    held = held_reply(model)
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    held.wait_reached()

    proxy.cut()  # the next renewal cannot reach the database
    app.wait_idle()  # ...so the run was stopped, and the scheduler let the thread go
    assert app.tasks_running(app.run_task) == 0
    assert posted(slack) == []

    proxy.restore()
    held.release()  # the stopped run's model call: no one is left to act on its answer
    # The lease the stopped run held expires, and a sweep resumes the thread.
    slack.wait_for_call("reactions.remove", count=2, timeout=TIMEOUT)
    app.wait_idle()
    assert posted(slack) == [ANSWER]
    key = thread_of(event)
    assert app.assistant.store.pending(key) == []
    assert app.log(key)[-1]["content"]["toolCall"] == "finishRequest"


def test_two_instances_on_one_database_post_one_answer_when_one_loses_the_database(
    start_app, slack, model, postgres_url, proxy
):
    first = start_app(through(proxy, postgres_url))
    held = held_reply(model)
    event = say(slack, "where do we eat?")
    assert first.send_event(event).status == 200
    held.wait_reached()
    # Started while the first holds the thread: its sweeps leave the thread alone until the
    # first's lease has expired.
    second = start_app(postgres_url)

    proxy.cut()  # the first instance loses the database; the second does not
    first.wait_idle()
    assert first.tasks_running(first.run_task) == 0
    slack.wait_for_call("reactions.remove", count=2, timeout=TIMEOUT)
    second.wait_idle()
    assert posted(slack) == [ANSWER]

    proxy.restore()
    held.release()
    first.wait_idle()
    assert posted(slack) == [ANSWER]
    key = thread_of(event)
    assert second.assistant.store.pending(key) == []
    assert [e["content"]["toolCall"] for e in second.log(key) if e["role"] == "assistant"] == [
        "postMessage",
        "finishRequest",
    ]


def test_a_run_that_stalled_past_its_lease_does_not_post(make_app, slack, model):
    """The process stalls (a long pause, a starved CPU) with the post about to go out; the
    lease expires meanwhile and another process takes the thread. When the run goes on, it
    checks its deadline before posting, and stops."""
    app = make_app(assistant_run_lease_seconds=1)
    store = app.assistant.store
    agent = app.agent()
    post_message = agent.tools["postMessage"]

    async def stalled_post(call: Any, ctx: Any, index: int) -> str | None:
        time.sleep(1.0)  # blocks the app's event loop for a whole lease: a stalled process
        assert store.claim(ctx.key, "another-process", 3600)  # the lease had expired
        return await post_message(call, ctx, index)

    agent.tools["postMessage"] = stalled_post
    model.script(answer_and_finish("too late"))
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    assert posted(slack) == []
    key = thread_of(event)
    assert [p.index for p in store.pending(key)] == [1]  # owed, left to the new holder
    assert app.log(key)[-1]["content"]["toolCall"] == "postMessage"  # recorded, never sent
