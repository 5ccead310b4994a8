"""Approvals and the stop button, and clicks that are not the asker's (issue 43, points 7, 8 and
15): a stop ends an approval's wait at once (the call not carried out, the buttons' message
updated, the next message answered); a click after a stop is refused and the stopped call is
never carried out; someone else's clicks are refused once per person per waiting call. The
app in process (the Bolt tier), a real MCP server on loopback, the fake Slack and model."""

from __future__ import annotations

import asyncio

import pytest

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from tests.app.test_mcp_approvals import (
    ANSWER,
    BOB,
    CANCEL,
    asked,
    click,
    finished,
    shop_app,
    shown,
    texts,
)
from tests.harness import TIMEOUT, thread_of, wait_session
from tests.harness import mention as say
from tests.mcp_servers import ShopServer
from tests.mcp_servers.shop import CALLS

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

STOPPED_CALL = (
    f"Not carried out: shop__cancel_order (entry 2): the request was stopped by <@{ids.USER_ID}> "
    "at "
)


@pytest.fixture
def shop_server():
    CALLS.clear()
    server = ShopServer().start()
    yield server
    server.stop()


def stop(app, slack, event, user: str = ids.USER_ID) -> None:
    pressed = slack.agents.press_stop(event["channel"], event["ts"], user=user)
    assert app.send_event(pressed).status == 200
    app.wait_handled()


def test_a_stop_ends_the_wait_and_the_next_message_is_answered_at_once(
    make_app, slack, model, shop_server, tmp_path
):
    slack.agents.agent = True
    app = shop_app(make_app, shop_server, tmp_path)
    model.script(replies.tool_calls(CANCEL), ANSWER)
    event = say(slack, "please cancel my order A1")
    message = asked(app, slack, event)

    stop(app, slack, event)
    log = app.log(thread_of(event))
    system = texts(log)
    assert system[-2].startswith(STOPPED_CALL), system
    assert system[-1].startswith(f"Stopped: <@{ids.USER_ID}> pressed stop at ")
    assert app.assistant.store.pending(thread_of(event)) == []
    assert "Stopped by" in shown(slack, message) and "actions" not in shown(slack, message)
    wait_session(slack, event, "active")  # no longer suspended

    # The next question is answered now, not at the approval's expiry.
    later = say(slack, "never mind, what's the weather?", thread_ts=event["ts"])
    assert app.send_event(later).status == 200
    app.wait_handled()
    log = app.log(thread_of(event))
    assert finished(log), texts(log)
    assert len(model.requests) == 2
    assert CALLS["cancel_order"] == 0


def test_allow_after_a_stop_is_refused_and_the_call_never_runs(
    make_app, slack, model, shop_server, tmp_path
):
    slack.agents.agent = True
    app = shop_app(make_app, shop_server, tmp_path)
    model.script(replies.tool_calls(CANCEL), ANSWER)
    event = say(slack, "please cancel my order A1")
    message = asked(app, slack, event)
    stop(app, slack, event)
    entries = len(app.log(thread_of(event)))

    click(app, slack, message, "approval_allow")  # the buttons a person's Slack still shows
    app.wait_handled()
    assert len(app.log(thread_of(event))) == entries  # nothing recorded
    (told,) = slack.ephemerals
    assert told["user"] == ids.USER_ID and told["text"] == "This request was stopped."

    later = say(slack, "what's the weather?", thread_ts=event["ts"])
    assert app.send_event(later).status == 200
    app.wait_handled()
    log = app.log(thread_of(event))
    assert finished(log)
    assert not any("Order A1 cancelled" in t for t in texts(log))
    assert CALLS["cancel_order"] == 0


def test_a_call_allowed_before_the_stop_was_recorded_is_not_carried_out(
    make_app, slack, model, shop_server, tmp_path
):
    """The stop is in the store (pressed at one process) but its entry not yet recorded, and
    the Allow arrives: refused, and the run that records the stop carries nothing out."""
    slack.agents.agent = True
    app = shop_app(make_app, shop_server, tmp_path)
    model.script(replies.tool_calls(CANCEL), ANSWER)
    event = say(slack, "please cancel my order A1")
    message = asked(app, slack, event)
    key = thread_of(event)
    store = app.assistant.store
    assert store.request_stop(key, ids.USER_ID, event["ts"], ()) is not None

    click(app, slack, message, "approval_allow")
    app.wait_handled()
    assert slack.ephemerals[-1]["text"] == "This request was stopped."
    assert not any(" allowed by " in t for t in texts(app.log(key)))

    async def the_stop_arrives() -> None:  # as the process that took the event nudges its own
        app.assistant.scheduler.request(key)

    asyncio.run_coroutine_threadsafe(the_stop_arrives(), app._loop).result(TIMEOUT)
    app.wait_idle()
    system = texts(app.log(key))
    assert system[-2].startswith(STOPPED_CALL) and system[-1].startswith("Stopped: ")
    assert CALLS["cancel_order"] == 0


def test_someone_elses_clicks_are_refused_once_per_person_per_call(
    make_app, slack, model, shop_server, tmp_path
):
    slack.add_user(BOB, "bob")
    slack.conversations.public(ids.CHANNEL_ID, [ids.USER_ID, BOB], name="general")
    app = shop_app(make_app, shop_server, tmp_path)
    model.script(replies.tool_calls(CANCEL), ANSWER)
    event = say(slack, "please cancel my order A1")
    message = asked(app, slack, event)
    before = len(app.log(thread_of(event)))

    for _ in range(30):
        click(app, slack, message, "approval_allow", user=BOB)
    log = app.log(thread_of(event))
    refusals = [t for t in texts(log) if f"a click by <@{BOB}>" in t]
    assert len(refusals) == 1 and len(log) == before + 1
    assert [e["user"] for e in slack.ephemerals] == [BOB]
    assert not finished(log)

    click(app, slack, message, "approval_allow")  # the person who asked still decides
    app.wait_idle()
    assert any(t.endswith("Order A1 cancelled") for t in texts(app.log(thread_of(event))))
