"""One call of the model, one call of the tool (issue 43, point 1): a process stops while an
MCP call that changes something is under way, after the server carried it out; the process
that resumes the run does not call again, and records that the outcome is unknown. A tool its
server marks idempotent is called again. The app in process (the Bolt tier), stopped as a
process stops its runs; the next app on the same store; a real MCP server on loopback that
counts its calls and never answers the first."""

from __future__ import annotations

import asyncio
import json

import pytest

from assistant.fakes.openai import responses as replies
from tests.app.test_mcp_approvals import ANSWER, asked, click, finished, texts
from tests.harness import TIMEOUT, prompt_log, thread_of
from tests.harness import mention as say
from tests.mcp_servers import ShopServer
from tests.mcp_servers.ledger import CALLS, EXECUTED, ledger, reset

# How the app runs what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners


@pytest.fixture
def ledger_server():
    reset()
    server = ShopServer(server=ledger).start()
    yield server
    server.stop()


def start(make_app, server, tmp_path, database_url: str, **file_settings: object):
    """An app on the store at `database_url`, with the ledger server (and `file_settings`)."""
    path = tmp_path / "mcp.json"
    ledger_file = {"url": server.url, **file_settings}
    path.write_text(json.dumps({"servers": {"ledger": ledger_file}}))
    return make_app(assistant_mcp_file=str(path), database_url=database_url)


def call(tool: str) -> tuple[str, dict[str, str]]:
    return (f"ledger__{tool}", {"order": "A1", "reasoning": "the person asked"})


def stop_during_the_call(app) -> None:
    """Once the server has done the call's work: the process stops its runs (a deploy),
    with no grace, while the call's answer is still to come; then the app is closed."""
    assert EXECUTED.wait(TIMEOUT)
    stopping = app.assistant.scheduler.stop(grace=0)
    asyncio.run_coroutine_threadsafe(stopping, app._loop).result(TIMEOUT)
    app.stop()


def unknown(tool: str, index: int) -> str:
    return (
        f"Error: ledger__{tool} (entry {index}) failed: the outcome is unknown (the process "
        "stopped during the call); it was not called again"
    )


def test_an_allowed_call_under_way_when_the_process_stopped_is_not_made_again(
    make_app, slack, model, ledger_server, tmp_path, app_stores
):
    first = start(make_app, ledger_server, tmp_path, app_stores[0])
    model.script(replies.tool_calls(call("charge")), ANSWER)
    event = say(slack, "please charge order A1")
    key = thread_of(event)
    message = asked(first, slack, event)
    click(first, slack, message, "approval_allow")
    assert EXECUTED.wait(TIMEOUT)
    # Recorded before the request left: the server had it, and the log already said so.
    assert texts(first.log(key))[-1].startswith("Calling ledger__charge (entry 2) at ")
    stop_during_the_call(first)

    second = start(make_app, ledger_server, tmp_path, app_stores[0])
    second.wait_idle()
    log = second.log(key)
    assert finished(log), texts(log)
    assert CALLS["charge"] == 1  # one click, one charge
    system = texts(log)
    assert unknown("charge", 2) in system
    assert not any(t.startswith("Result of ledger__charge") for t in system)
    # The model reads it, and decides with the person what to do.
    assert unknown("charge", 2) in [e["content"] for e in prompt_log(model.requests[-1])]


def test_an_idempotent_tool_under_way_when_the_process_stopped_is_called_again(
    make_app, slack, model, ledger_server, tmp_path, app_stores
):
    first = start(make_app, ledger_server, tmp_path, app_stores[0])
    model.script(replies.tool_calls(call("mark_paid")), ANSWER)
    event = say(slack, "please mark order A1 paid")
    key = thread_of(event)
    message = asked(first, slack, event)  # it changes something: a person allows it
    click(first, slack, message, "approval_allow")
    stop_during_the_call(first)

    second = start(make_app, ledger_server, tmp_path, app_stores[0])
    second.wait_idle()
    log = second.log(key)
    assert finished(log), texts(log)
    assert CALLS["mark_paid"] == 2
    system = texts(log)
    assert any(t.endswith("Order A1 is marked paid") for t in system)
    assert not any("the outcome is unknown" in t for t in system)
    assert len([t for t in system if t.startswith("Calling ledger__mark_paid")]) == 1


def test_a_call_needing_no_approval_under_way_when_the_process_stopped_is_not_made_again(
    make_app, slack, model, ledger_server, tmp_path, app_stores
):
    first = start(make_app, ledger_server, tmp_path, app_stores[0], approve={"charge": "never"})
    model.script(replies.tool_calls(call("charge")), ANSWER)
    event = say(slack, "please charge order A1")
    key = thread_of(event)
    assert first.send_event(event).status == 200
    stop_during_the_call(first)
    assert first.log(key)[-1]["content"]["toolCall"] == "ledger__charge"  # its entry, no result

    second = start(make_app, ledger_server, tmp_path, app_stores[0], approve={"charge": "never"})
    second.wait_idle()
    log = second.log(key)
    assert finished(log), texts(log)
    assert CALLS["charge"] == 1
    assert unknown("charge", 2) in texts(log)


def test_a_call_a_grant_allowed_under_way_when_the_process_stopped_is_not_made_again(
    make_app, slack, model, ledger_server, tmp_path, app_stores
):
    """A grant stands in for the click (docs/slack-features.md#grants): its entry is recorded
    before the request leaves, as `Calling …` is, so the resumed run asks no one and does
    not call again."""
    first = start(make_app, ledger_server, tmp_path, app_stores[0])
    model.script(replies.tool_calls(call("charge")), ANSWER)
    event = say(slack, "please charge order A1")
    key = thread_of(event)
    first.assistant.store.give_grant(
        key.team, key.channel, "ledger", "charge", None, "U0EDITOR1", "1.000001"
    )
    assert first.send_event(event).status == 200
    stop_during_the_call(first)

    second = start(make_app, ledger_server, tmp_path, app_stores[0])
    second.wait_idle()
    log = second.log(key)
    assert finished(log), texts(log)
    assert CALLS["charge"] == 1
    system = texts(log)
    assert system[1].startswith("Allowed by grant 1: ledger__charge (entry 2) runs without asking")
    assert unknown("charge", 2) in system
    assert not any(t.startswith("Approval requested") for t in system)
