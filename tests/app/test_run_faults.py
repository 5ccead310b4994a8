"""A mention is never lost silently: a model answer that is not a chat completion, a database
that restarts or cuts a write off, an exception no one expected and the step cap each end in an
answer, or in an apology and an `Error:` entry, never in a request marked answered unsaid.

PostgreSQL's connections are cut through `tests.tcp_proxy.TcpProxy`, between the app and the
server."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, OperationalError

from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.bodies import BAD_BODIES, html_page
from assistant.run.core.store_errors import store_unavailable
from assistant.run.loop.apologies import SORRY_MODEL, SORRY_STEPS, SORRY_UNEXPECTED
from context.storage import ThreadKey
from tests.app.test_model_failures import answered, script_one_answer, still_answers, system_texts
from tests.harness import TIMEOUT, RunningApp, app_settings, thread_of
from tests.harness import mention as say
from tests.tcp_proxy import TcpProxy

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

LEASE_SECONDS = 3  # a run stopped by the database is resumed within a sweep (half of it)


@pytest.fixture
def proxy() -> Iterator[TcpProxy]:
    with TcpProxy() as running:
        yield running


@pytest.fixture
def proxied_app(slack, model, postgres_url, proxy) -> Iterator[RunningApp]:
    """The app on PostgreSQL, through the proxy."""
    url = make_url(postgres_url).set(port=proxy.port).render_as_string(hide_password=False)
    settings = app_settings(slack, model, url, assistant_run_lease_seconds=LEASE_SECONDS)
    app = RunningApp(settings).start()
    yield app
    app.stop()


def posted(slack) -> list[str]:
    return [c.params["text"] for c in slack.calls_to("chat.postMessage") if c.ok]


def tool_calls(log: list[dict]) -> list[str]:
    return [e["content"]["toolCall"] for e in log if e["role"] == "assistant"]


def answer_and_finish(text: str) -> replies.Completion:
    return replies.tool_calls(
        ("postMessage", {"text": text, "reasoning": "answer"}),
        ("finishRequest", {"reasoning": "done"}),
    )


def inject_tool(app: RunningApp, name: str, tool: Callable[..., Any]) -> None:
    """Replace one of the running app's tools."""
    app.agent().tools[name] = tool


def wait_answered(app: RunningApp, slack, runs: int) -> None:
    """Until `runs` runs have ended (each removes its :eyes:) and none is left going."""
    slack.wait_for_call("reactions.remove", count=runs, timeout=TIMEOUT)
    app.wait_idle()


# -- the model answers 200 with something that is not a chat completion --------------------

NOT_A_COMPLETION = "JSON that is not a chat completion"
WHAT_CAME = {
    "html-page": "an HTML page (text/html)",
    "not-json": "a body that is not JSON (application/json)",
    "null-message": f"{NOT_A_COMPLETION} (choices.0.message: ",
    "null-function": f"{NOT_A_COMPLETION} (choices.0.message.tool_calls.0.function: ",
    "list-content": f"{NOT_A_COMPLETION} (choices.0.message.content: ",
    "empty-body": "an empty body",
}


@pytest.mark.parametrize("kind", list(BAD_BODIES))
def test_an_answer_that_is_not_a_chat_completion_is_retried_then_apologized_for(
    make_app, slack, model, kind
):
    app = make_app(openai_max_retries=1)
    model.script(BAD_BODIES[kind](), BAD_BODIES[kind]())
    log = answered(app, slack, "hello")
    (error,) = system_texts(log)
    assert error.startswith(
        f"Error: the model call failed: the model service answered with {WHAT_CAME[kind]}"
    )
    assert error.endswith(f', not a chat completion. The user was told: "{SORRY_MODEL.english()}"')
    assert len(model.requests) == 2  # the call and its one retry
    assert posted(slack) == [SORRY_MODEL.english()]
    still_answers(app, slack, model)


def test_a_bad_answer_is_retried_and_the_good_one_after_it_used(make_app, slack, model):
    app = make_app(openai_max_retries=1)
    model.script(html_page())
    script_one_answer(model)
    log = answered(app, slack, "hello")
    assert system_texts(log) == []
    assert tool_calls(log) == ["postMessage", "finishRequest"]
    assert len(model.requests) == 3
    assert posted(slack) == ["Here you go"]


# -- an exception no part of the run expected, and the step cap ------------------------------


def test_an_unexpected_exception_ends_the_run_with_an_apology_naming_it(app, slack, model):
    async def broken(call: object, ctx: object, index: int) -> str:
        return {}["messages"]  # a bug: KeyError

    inject_tool(app, "getThreadHistory", broken)
    model.script(replies.tool_calls(("getThreadHistory", {"reasoning": "look"})))
    event = say(slack, "what did we say?")
    assert app.send_event(event).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    log = app.log(thread_of(event))
    assert tool_calls(log) == ["getThreadHistory"]
    assert system_texts(log) == [
        f"Error: the run failed unexpectedly (KeyError). "
        f'The user was told: "{SORRY_UNEXPECTED.english()}"'
    ]
    assert posted(slack) == [SORRY_UNEXPECTED.english()]
    assert app.assistant.store.pending(thread_of(event)) == []
    still_answers(app, slack, model)


def test_a_run_stopped_by_the_step_cap_says_so_in_the_thread(make_app, slack, model):
    app = make_app(assistant_max_steps=3)
    model.default = replies.tool_calls(("getThreadHistory", {"reasoning": "again"}))
    log = answered(app, slack, "hello")
    assert tool_calls(log) == ["getThreadHistory"] * 3
    assert len(model.requests) == 3
    assert system_texts(log)[-1] == (
        f"Error: stopped after 3 steps without finishRequest. "
        f'The user was told: "{SORRY_STEPS.english()}"'
    )
    assert posted(slack) == [SORRY_STEPS.english()]
    model.default = None
    still_answers(app, slack, model)


# -- the database cut off or busy while a run goes --------------------------------------------


def test_a_busy_database_leaves_the_request_owed_and_a_broken_statement_does_not(tmp_path):
    """What the scheduler takes for "try again later": here SQLite's lock, held elsewhere
    (a busy timeout of 0 instead of waiting for it); below, PostgreSQL's cut connections."""
    path = tmp_path / "busy.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
    other.execute("INSERT INTO t VALUES (1)")
    other.execute("BEGIN IMMEDIATE")  # another process is writing
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": 0})
    try:
        locking = pytest.raises(OperationalError, match="database is locked")
        with locking as locked, engine.begin() as connection:
            connection.exec_driver_sql("INSERT INTO t VALUES (2)")
        other.execute("ROLLBACK")
        with pytest.raises(IntegrityError) as broken, engine.begin() as connection:
            connection.exec_driver_sql("INSERT INTO t VALUES (1)")
    finally:
        engine.dispose()
        other.close()
    assert store_unavailable(locked.value)
    assert not store_unavailable(broken.value)
    assert not store_unavailable(KeyError("ts"))


def assert_answered_once(app: RunningApp, slack, key: ThreadKey, text: str) -> list[dict]:
    assert posted(slack) == [text]
    log = app.log(key)
    assert tool_calls(log)[-1] == "finishRequest"
    assert [e for e in system_texts(log) if e.startswith("Error")] == []
    assert app.assistant.store.pending(key) == []
    return log


def test_a_database_restart_while_the_run_waits_on_the_model_loses_nothing(
    proxied_app, slack, model, proxy
):
    """The pool's connections died with the restart: they are replaced, not failed on."""
    app = proxied_app
    held = replies.hold(answer_and_finish("The café downstairs."))
    model.script(held)
    model.default = answer_and_finish("The café downstairs.")  # if the run had to start over
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    held.wait_reached()
    proxy.cut()
    proxy.restore()
    held.release()
    slack.wait_for_call("chat.postMessage", timeout=TIMEOUT)
    app.wait_idle()  # the run that posted is still under way: until it has ended
    assert_answered_once(app, slack, thread_of(event), "The café downstairs.")


def test_a_write_cut_off_leaves_the_mention_owed_and_it_is_answered_once(
    proxied_app, slack, model, proxy
):
    """A failover while the run records the model's answer: the write fails, the request
    stays owed (never marked answered unsaid) and a sweep runs it again."""
    app = proxied_app
    held = replies.hold(answer_and_finish("The café downstairs."))
    model.script(held, answer_and_finish("The café downstairs."))
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    held.wait_reached()
    proxy.cut_on(b"INSERT INTO entries")
    held.release()
    wait_answered(app, slack, runs=2)
    assert proxy.statements_cut == 1
    assert len(model.requests) == 2  # the stopped run's step, and the resumed run's
    log = assert_answered_once(app, slack, thread_of(event), "The café downstairs.")
    assert tool_calls(log) == ["postMessage", "finishRequest"]


def test_a_post_not_marked_posted_when_the_database_failed_is_not_posted_again(
    proxied_app, slack, model, proxy
):
    """The post reached Slack, then the write marking it posted was cut off: the resumed run
    finds it in the thread by its metadata and does not post it again."""
    app = proxied_app
    model.script(
        replies.tool_calls(("postMessage", {"text": "The café downstairs.", "reasoning": "r"})),
        replies.finish_request("already answered"),
    )
    proxy.cut_on(b"UPDATE entries SET slack_ts")
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    wait_answered(app, slack, runs=2)
    assert proxy.statements_cut == 1
    key = thread_of(event)
    log = assert_answered_once(app, slack, key, "The café downstairs.")
    assert tool_calls(log) == ["postMessage", "finishRequest"]
    assert system_texts(log) == [
        "The process restarted during this run; the message of entry 2 had reached Slack."
    ]
    assert app.assistant.store.metadata(key)[2].slack_ts is not None
