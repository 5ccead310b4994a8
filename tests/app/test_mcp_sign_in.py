"""People sign in to an `auth: user` MCP server from Slack: the SDK's own MCP server and
authorization server on loopback (tests/mcp_servers/identity.py), the real app in process
(the Bolt tier), the fake Slack and model. A person not connected gets a Connect link only
they see, and the run waits; a fake browser follows the link to the app's callback, and the
run resumes by itself, making the call as that person."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography.fernet import Fernet

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from context.storage import ThreadKey, open_store
from tests.cli import run_cli
from tests.harness import TIMEOUT, thread_of
from tests.harness import mention as say
from tests.mcp.test_sign_in import PUBLIC, browse, connect
from tests.mcp_servers.identity import IdentityServer

pytestmark = pytest.mark.listeners

BOB = "U0FAKEBOB1"  # a second person in the thread
KEY = Fernet.generate_key().decode()
ANSWER = replies.tool_calls(
    ("postMessage", {"text": "Done.", "reasoning": "answer"}),
    ("finishRequest", {"reasoning": "done"}),
)
CONNECT = replies.tool_calls(("ids__connect", {"reasoning": "I need their account"}))
WHOAMI = replies.tool_calls(("ids__whoami", {"reasoning": "who are they"}))
SECRET = replies.tool_calls(("ids__secret", {"reasoning": "needs more scope"}))


@pytest.fixture(scope="module")
def server():
    with IdentityServer() as running:
        yield running


def sign_in_app(make_app, server, tmp_path, entry: dict[str, Any] | None = None, **settings: Any):
    path = tmp_path / "mcp.json"
    entry = {"url": server.url, "auth": "user", **(entry or {})}
    path.write_text(json.dumps({"servers": {"ids": entry}}))
    return make_app(
        assistant_mcp_file=str(path),
        assistant_secret_key=KEY,
        assistant_public_url=PUBLIC,
        **settings,
    )


def texts(log: list[dict]) -> list[str]:
    return [e["content"] for e in log if e["role"] == "system" and isinstance(e["content"], str)]


def wait_log(app, key, done, timeout: float = TIMEOUT) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        log = app.log(key)
        if done(log):
            return log
        assert time.monotonic() < deadline, texts(log)
        time.sleep(0.05)


def connect_link(slack, user: str, count: int) -> str:
    """The Connect button's URL in the `count`th ephemeral shown to `user`."""
    calls = slack.wait_for_call(
        "chat.postEphemeral", count=count, where=lambda c: c.params.get("user") == user
    )
    blocks = calls[-1].params["blocks"]
    blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
    (button,) = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert button["text"]["text"] == "Connect ids"
    return str(button["url"])


def come_back(app, query: dict[str, str]):
    """The browser's GET of /mcp/oauth/callback, as the HTTP app's route hands it over."""
    callback = app.assistant.sign_in_callback
    return app._call(callback.returned(query["state"], query.get("code"), query.get("error")))


def answered(count: int):
    def done(log: list[dict]) -> bool:
        ends = [e for e in log if e["role"] == "assistant"
                and e["content"].get("toolCall") == "finishRequest"]  # fmt: skip
        return len(ends) >= count

    return done


def test_two_people_each_connect_and_each_call_is_theirs(make_app, slack, model, server, tmp_path):
    slack.agents.agent = True
    app = sign_in_app(make_app, server, tmp_path)
    # Alice: the server's tools need someone's sign-in: its stand-in asks her to connect.
    model.script(CONNECT, WHOAMI, ANSWER)
    event = say(slack, "who am I on ids?")
    key = thread_of(event)
    assert app.send_event(event).status == 200
    url = connect_link(slack, ids.USER_ID, 1)
    log = wait_log(app, key, lambda log: any(t.startswith("Sign-in requested") for t in texts(log)))
    app.wait_idle()
    assert texts(log)[-1].startswith(
        f"Sign-in requested: ids__connect (entry 2) waits for <@{ids.USER_ID}> to connect to "
        "the MCP server ids until "
    )
    statuses = [c.params["status"] for c in slack.calls_to("agents.sessions.setStatus")]
    assert statuses[-1] == "suspended"
    assert len(model.requests) == 1

    page = come_back(app, asyncio.run(browse(url, "alice")))
    assert page.status == 200 and "Connected to ids" in page.text
    log = wait_log(app, key, answered(1))
    app.wait_idle()
    system = texts(log)
    outcome = f"Sign-in of ids__connect (entry 2): <@{ids.USER_ID}> connected to ids at "
    assert any(t.startswith(outcome) for t in system)
    assert any("you are alice" in t for t in system)
    assert (
        f"Result of ids__connect (entry 2): <@{ids.USER_ID}> connected to the MCP server ids; "
        "its tools are offered from now on."
    ) in system

    # Bob, in the same thread: the tools are known now; his call waits for his own sign-in.
    model.script(WHOAMI, ANSWER)
    reply = say(slack, "and me?", user=BOB, thread_ts=event["ts"])
    assert app.send_event(reply).status == 200
    url = connect_link(slack, BOB, 1)
    wait_log(app, key, lambda log: sum(t.startswith("Sign-in requested") for t in texts(log)) == 2)
    app.wait_idle()
    page = come_back(app, asyncio.run(browse(url, "bob")))
    assert page.status == 200
    log = wait_log(app, key, answered(2))
    app.wait_idle()
    system = texts(log)
    assert any("you are bob" in t for t in system)
    assert sum("you are alice" in t for t in system) == 1  # Bob's call never made as Alice

    # Nothing secret in the log, the trace or the rows.
    tokens = list(server.provider.access) + list(server.provider.refresh)
    dumped = json.dumps(log) + app.trace.getvalue()
    assert tokens and not any(t in dumped for t in tokens)
    assert "state=" not in dumped and "code=" not in dumped


def test_denied_the_model_reads_that_they_did_not_connect(make_app, slack, model, server, tmp_path):
    app = sign_in_app(make_app, server, tmp_path)
    model.script(CONNECT, ANSWER)
    event = say(slack, "connect me", user="U0FAKECAROL")
    key = thread_of(event)
    assert app.send_event(event).status == 200
    url = connect_link(slack, "U0FAKECAROL", 1)
    app.wait_idle()
    page = come_back(app, asyncio.run(browse(url, deny=True)))
    assert page.status == 200 and "Not connected" in page.text
    log = wait_log(app, key, answered(1))
    assert (
        "Not carried out: ids__connect (entry 2): <@U0FAKECAROL> did not connect to the MCP "
        "server ids (the authorization server answered access_denied)."
    ) in texts(log)
    # The model read it in its next request.
    assert "did not connect" in json.dumps(model.requests[-1])
    # The link is spent: a second use is refused and records nothing.
    entries = len(log)
    assert come_back(app, {"state": "forged", "code": "x"}).status == 400
    assert len(app.log(key)) == entries


def test_a_restart_while_a_sign_in_is_pending_resumes_once(
    make_app, slack, model, server, tmp_path
):
    first = sign_in_app(make_app, server, tmp_path)
    url_db = first.settings.storage.database_url
    model.script(CONNECT, WHOAMI, ANSWER)
    event = say(slack, "who am I?", user="U0FAKEDAVE")
    key = thread_of(event)
    assert first.send_event(event).status == 200
    url = connect_link(slack, "U0FAKEDAVE", 1)
    first.wait_idle()
    first.stop()  # the process goes away while the person signs in

    again = sign_in_app(make_app, server, tmp_path, database_url=url_db)
    query = asyncio.run(browse(url, "dave"))
    assert come_back(again, query).status == 200
    log = wait_log(again, key, answered(1))
    again.wait_idle()
    system = texts(log)
    assert sum(t.startswith("Sign-in of ids__connect (entry 2)") for t in system) == 1
    assert sum(t.startswith("Result of ids__connect (entry 2)") for t in system) == 1
    assert any("you are dave" in t for t in system)
    # The same page again (a reload): refused, and the thread not resumed twice.
    assert come_back(again, query).status == 400
    store = open_store(url_db)
    try:
        assert store.mcp_connection(ids.TEAM_ID, "U0FAKEDAVE", "ids") is not None
    finally:
        store.close()
    # Neither the trace nor `assistant export --with-metadata` holds a token or the state.
    again.stop()
    thread = f"{key.team}/{key.channel}/{key.thread_ts}"
    exported = run_cli("export", "--with-metadata", thread, env={"DATABASE_URL": str(url_db)})
    assert exported.returncode == 0, exported.stderr
    secrets = [*server.provider.access, *server.provider.refresh, query["state"], query["code"]]
    shown = exported.stdout.decode() + first.trace.getvalue() + again.trace.getvalue()
    assert "U0FAKEDAVE" in shown
    assert not any(secret in shown for secret in secrets)


def test_a_person_disconnects_on_their_app_home(make_app, slack, model, server, tmp_path):
    from assistant.fakes.events.home import app_home_opened, home_click
    from assistant.panel.home_connections import DISCONNECT_ACTION
    from tests.app.test_channel_settings import interact

    app = sign_in_app(make_app, server, tmp_path)
    sign_ins = app.assistant.sign_in_callback.sign_ins
    app._call(connect(sign_ins, ids.USER_ID, "erin", key=ThreadKey(ids.TEAM_ID, "C1", "1.2")))
    token = app._call(sign_ins.bearer("ids", ids.TEAM_ID, ids.USER_ID))
    assert token in server.provider.access

    assert app.send_event(app_home_opened(user=ids.USER_ID)).status == 200
    (published,) = slack.wait_for_call("views.publish", count=1)
    assert published.response["ok"], published.response
    tab = slack.home_tabs[ids.USER_ID]
    shown = json.dumps(tab)
    assert "Your connected tools" in shown and "Disconnect" in shown and token not in shown

    status, _ = interact(app, home_click(slack, tab, DISCONNECT_ACTION, "ids", user=ids.USER_ID))
    assert status == 200
    slack.wait_for_call("views.publish", count=2)
    app.wait_listeners()
    assert app.assistant.store.mcp_connection(ids.TEAM_ID, ids.USER_ID, "ids") is None
    assert token not in server.provider.access  # revoked at the server
    assert "Your connected tools" not in json.dumps(slack.home_tabs[ids.USER_ID])


def test_a_token_revoked_at_the_server_asks_the_person_again(
    make_app, slack, model, server, tmp_path
):
    app = sign_in_app(make_app, server, tmp_path)
    sign_ins = app.assistant.sign_in_callback.sign_ins
    app._call(connect(sign_ins, ids.USER_ID, "frank", key=ThreadKey(ids.TEAM_ID, "C1", "1.2")))
    model.script(WHOAMI, ANSWER, WHOAMI, ANSWER)
    event = say(slack, "who am I?")
    key = thread_of(event)
    assert app.send_event(event).status == 200
    wait_log(app, key, answered(1))
    app.wait_idle()
    server.provider.revoke("frank")  # an admin at the server; our row still holds the token
    again = say(slack, "and now?", thread_ts=event["ts"])
    assert app.send_event(again).status == 200
    url = connect_link(slack, ids.USER_ID, 1)  # the call was refused: asked to connect again
    wait_log(app, key, lambda log: any(t.startswith("Sign-in requested") for t in texts(log)))
    app.wait_idle()
    assert app.assistant.store.mcp_connection(ids.TEAM_ID, ids.USER_ID, "ids") is None
    assert come_back(app, asyncio.run(browse(url, "frank"))).status == 200
    log = wait_log(app, key, answered(2))
    assert sum("you are frank" in t for t in texts(log)) == 2


def test_a_stop_ends_a_sign_in_s_wait_and_its_link_then_connects_no_run(
    make_app, slack, model, server, tmp_path
):
    from tests.harness import wait_session

    slack.agents.agent = True
    app = sign_in_app(make_app, server, tmp_path)
    model.script(CONNECT)
    event = say(slack, "connect me", user="U0FAKEGINA")
    key = thread_of(event)
    assert app.send_event(event).status == 200
    url = connect_link(slack, "U0FAKEGINA", 1)
    wait_log(app, key, lambda log: any(t.startswith("Sign-in requested") for t in texts(log)))
    app.wait_idle()

    pressed = slack.agents.press_stop(event["channel"], event["ts"], user="U0FAKEGINA")
    assert app.send_event(pressed).status == 200
    app.wait_handled()
    system = texts(app.log(key))
    assert system[-2].startswith(
        "Not carried out: ids__connect (entry 2): the request was stopped by <@U0FAKEGINA> at "
    ), system
    assert system[-1].startswith("Stopped: <@U0FAKEGINA> pressed stop at ")
    wait_session(slack, event, "active")
    # The link still signs them in (their choice), but no run waits: nothing more recorded.
    entries = len(app.log(key))
    page = come_back(app, asyncio.run(browse(url, "gina")))
    assert page.status == 200 and "no longer waits" in page.text
    app.wait_idle()
    assert len(app.log(key)) == entries
    assert len(model.requests) == 1


def test_one_sign_in_resumes_every_thread_waiting_for_it(make_app, slack, model, server, tmp_path):
    app = sign_in_app(make_app, server, tmp_path)
    model.script(CONNECT, CONNECT, ANSWER, ANSWER)
    first = say(slack, "connect me here", user="U0FAKEHANK")
    assert app.send_event(first).status == 200
    url = connect_link(slack, "U0FAKEHANK", 1)
    app.wait_idle()
    second = say(slack, "and there", user="U0FAKEHANK")
    assert app.send_event(second).status == 200
    connect_link(slack, "U0FAKEHANK", 2)
    app.wait_idle()

    assert come_back(app, asyncio.run(browse(url, "hank"))).status == 200
    for event in (first, second):
        log = wait_log(app, thread_of(event), answered(1))
        assert any(t.startswith("Result of ids__connect (entry 2): <@U0FAKEHANK> connected")
                   for t in texts(log)), texts(log)  # fmt: skip


def test_insufficient_scope_asks_again_with_the_union_and_the_call_then_goes_through(
    make_app, slack, model, server, tmp_path
):
    """A step-up: connected with `tools` only, the `secret` tool answers 403
    `insufficient_scope`; the person's Connect link asks for `tools admin`, the run waits as
    for a first sign-in, and the call is made with the new token once they are back."""
    app = sign_in_app(make_app, server, tmp_path, {"scopes": ["tools"]})
    sign_ins = app.assistant.sign_in_callback.sign_ins
    app._call(connect(sign_ins, ids.USER_ID, "grace", key=ThreadKey(ids.TEAM_ID, "C1", "1.2")))
    model.script(WHOAMI, SECRET, ANSWER)
    event = say(slack, "tell me the secret")
    key = thread_of(event)
    assert app.send_event(event).status == 200
    url = connect_link(slack, ids.USER_ID, 1)
    assert parse_qs(urlsplit(url).query)["scope"] == ["tools admin"]
    wait_log(app, key, lambda log: any(t.startswith("Sign-in requested") for t in texts(log)))
    app.wait_idle()
    assert come_back(app, asyncio.run(browse(url, "grace"))).status == 200
    log = wait_log(app, key, answered(1))
    app.wait_idle()
    system = texts(log)
    assert any("you are grace" in t for t in system)
    assert any("the secret, for grace" in t for t in system)
    row = app.assistant.store.mcp_connection(ids.TEAM_ID, ids.USER_ID, "ids")
    assert row is not None and set((row.scope or "").split()) == {"tools", "admin"}


def test_a_deployment_server_answers_everyone_as_the_deployment(
    make_app, slack, model, server, tmp_path
):
    """`auth: deployment`: the admin's login comes back to the app's callback (its own page),
    and every person's call is then made as the deployment, with no Connect link."""
    from assistant.mcp.signin.deployment import await_login, begin_login

    app = sign_in_app(make_app, server, tmp_path, {"auth": "deployment"})
    sign_ins = app.assistant.sign_in_callback.sign_ins
    until = datetime.now(UTC) + timedelta(minutes=5)
    login = app._call(begin_login(sign_ins, "ids", until))
    page = come_back(app, asyncio.run(browse(login.url, "ops")))
    assert page.status == 200 and "for the whole deployment" in page.text
    assert app._call(await_login(sign_ins, login, until, poll=0.01)) is None
    model.script(WHOAMI, ANSWER)
    event = say(slack, "who is asking?", user=BOB)
    key = thread_of(event)
    assert app.send_event(event).status == 200
    log = wait_log(app, key, answered(1))
    app.wait_idle()
    assert any("you are ops" in t for t in texts(log))
    assert not slack.calls_to("chat.postEphemeral")
