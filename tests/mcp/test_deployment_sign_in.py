"""`auth: deployment`: one sign-in for everyone, made by an admin (`assistant mcp login`),
against the SDK's own MCP server and authorization server (tests/mcp_servers/identity.py) on
loopback; the admin's browser is the fake one of test_sign_in.py, coming back to the app's
callback (`SignIns.complete`, what `/mcp/oauth/callback` runs)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from assistant.commands import CliError
from assistant.commands.mcp import _login
from assistant.mcp.config import parse_servers
from assistant.mcp.connection import ServerTool
from assistant.mcp.servers import McpServers
from assistant.mcp.signin.deployment import (
    DEPLOYMENT_TEAM,
    DEPLOYMENT_USER,
    await_login,
    begin_login,
)
from assistant.mcp.signin.sealing import Sealer
from assistant.mcp.signin.tokens import SignIns
from context.storage import Store, open_store
from tests.cli import run_cli
from tests.mcp.test_sign_in import KEY, PUBLIC, SECRET, browse, connect
from tests.mcp_servers.identity import IdentityServer

LATER = datetime.now(UTC) + timedelta(minutes=10)
WHOAMI = ServerTool(
    server="ids", name="whoami", description="", schema={}, read_only=True, approve="never"
)


@pytest.fixture(scope="module")
def server() -> Iterator[IdentityServer]:
    with IdentityServer() as running:
        yield running


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    yield opened
    opened.close()


def deployment(store: Store, server: IdentityServer) -> SignIns:
    configs = parse_servers({"servers": {"ids": {"url": server.url, "auth": "deployment"}}})
    return SignIns(store, Sealer(SECRET), PUBLIC, configs)


async def log_in(signins: SignIns, who: str = "admin", scope: str | None = None) -> None:
    """`assistant mcp login ids` as the command runs it, the admin's browser meanwhile."""
    login = await begin_login(signins, "ids", LATER, scope)
    waiting = asyncio.create_task(await_login(signins, login, LATER, poll=0.01))
    query = await browse(login.url, who)
    done = await signins.complete(query["state"], query.get("code"), query.get("error"))
    assert done.connected, done.why
    assert await waiting is None


def servers_for(signins: SignIns) -> McpServers:
    servers = McpServers(list(signins.configs.values()), deadline=30.0)
    servers.sign_ins = signins
    return servers


def test_every_call_carries_the_deployments_token_whoever_asks(server, store):
    signins = deployment(store, server)

    async def scenario() -> None:
        await log_in(signins, "admin")
        servers = servers_for(signins)
        try:
            tools = {t.name: t for t in await servers.tools(person=None)}
            assert sorted(tools) == ["secret", "whoami"]
            for person in (None, ("T1", "UALICE"), ("T2", "UBOB")):
                outcome = await servers.call(tools["whoami"], {}, person=person)
                assert (outcome.failed, outcome.text) == (False, "you are admin")
            # A step-up: only an admin can give the deployment more scope.
            outcome = await servers.call(tools["secret"], {})
            assert outcome.failed and not outcome.sign_in
            assert "`assistant mcp login ids --scope 'tools admin'`" in outcome.text
            await log_in(signins, "admin", scope="admin")
            outcome = await servers.call(tools["secret"], {}, person=("T1", "UALICE"))
            assert (outcome.failed, outcome.text) == (False, "the secret, for admin")
        finally:
            await servers.close()

    asyncio.run(scenario())
    row = store.mcp_connection(DEPLOYMENT_TEAM, DEPLOYMENT_USER, "ids")
    assert row is not None and set((row.scope or "").split()) == {"tools", "admin"}
    assert server.provider.resources[-1] == server.url  # RFC 8707, as for people


def test_missing_or_refused_is_one_error_naming_the_login_and_one_log_line(server, store, caplog):
    signins = deployment(store, server)
    caplog.set_level(logging.WARNING, "assistant.mcp.servers")

    async def scenario() -> None:
        servers = servers_for(signins)
        try:
            assert await servers.tools() == []  # never signed in: nothing to offer
            for _ in range(2):
                outcome = await servers.call(WHOAMI, {})
                assert outcome.failed and not outcome.sign_in
                assert "`assistant mcp login ids`" in outcome.text
            said = [r for r in caplog.records if "assistant mcp login ids" in r.getMessage()]
            assert len(said) == 1
            caplog.clear()
            await log_in(signins, "admin")
            await servers.tools()
            assert (await servers.call(WHOAMI, {})).text == "you are admin"
            server.provider.revoke("admin")  # refused at the server from now on
            outcome = await servers.call(WHOAMI, {})
            assert outcome.failed and "`assistant mcp login ids`" in outcome.text
            assert store.mcp_connection(DEPLOYMENT_TEAM, DEPLOYMENT_USER, "ids") is None
            said = [r for r in caplog.records if "assistant mcp login ids" in r.getMessage()]
            assert len(said) == 1
        finally:
            await servers.close()

    asyncio.run(scenario())


def test_a_denied_or_expired_login_says_so_and_its_link_stops_working(server, store):
    signins = deployment(store, server)

    async def scenario() -> None:
        login = await begin_login(signins, "ids", LATER)
        query = await browse(login.url, deny=True)
        done = await signins.complete(query["state"], query.get("code"), query.get("error"))
        assert not done.connected
        # The callback took the sign-in and kept no token: no exchange is under way.
        why = await await_login(signins, login, LATER, poll=0.01, exchange_seconds=0.0)
        assert why == "the sign-in was not completed (the browser's page says why)"

        past = datetime.now(UTC) - timedelta(seconds=1)
        login = await begin_login(signins, "ids", past)
        why = await await_login(signins, login, past, poll=0.01)
        assert why is not None and why.startswith("no sign-in before ")
        assert not store.sign_in_pending(login.state_hash)  # withdrawn
        with pytest.raises(CliError, match=r"^not connected to ids: no sign-in before "):
            await _login(signins, "ids", 0.0001, poll=0.01)

    asyncio.run(scenario())
    assert store.mcp_connection(DEPLOYMENT_TEAM, DEPLOYMENT_USER, "ids") is None


def test_the_cli_lists_the_deployment_and_revokes_it(server, store, tmp_path):
    signins = deployment(store, server)
    asyncio.run(log_in(signins, "admin"))
    mcp_file = tmp_path / "mcp.json"
    mcp_file.write_text(json.dumps({"servers": {"ids": {"url": server.url, "auth": "deployment"}}}))
    env = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}",
        "ASSISTANT_MCP_FILE": str(mcp_file),
        "ASSISTANT_SECRET_KEY": SECRET,
        "ASSISTANT_PUBLIC_URL": PUBLIC,
    }
    listed = run_cli("mcp", "connections", env=env)
    assert listed.returncode == 0, listed.stderr
    assert [line.split("\t")[:3] for line in listed.stdout.decode().splitlines()] == [
        ["deployment", "-", "ids"]
    ]
    revoked = run_cli("mcp", "connections", "--revoke", "deployment", "ids", env=env)
    assert revoked.returncode == 0, revoked.stderr
    assert revoked.stdout.decode().strip() == "deployment\tids\trevoked at the server"
    assert "admin" in server.provider.revoked
    assert store.mcp_connection(DEPLOYMENT_TEAM, DEPLOYMENT_USER, "ids") is None
    # One line (after the store's), exit status 2, for what cannot be done.
    for argv, said in (
        (("mcp", "connections", "--revoke", "deployment", "ids"), "the deployment has no"),
        (("mcp", "connections", "--revoke", "ids"), "--revoke takes TEAM USER SERVER, or"),
        (("mcp", "login", "nope"), "nope is not an auth: deployment server"),
        (("mcp", "login", "ids", "--wait", "0"), "--wait takes seconds"),
    ):
        failed = run_cli(*argv, env=env)
        assert failed.returncode == 2, (argv, failed.stdout)
        error = failed.stderr.decode().splitlines()[-1]  # after the store's path, if opened
        assert error.startswith("assistant mcp: ") and said in error, error


def test_insufficient_scope_asks_the_person_again_with_the_union_and_the_new_token_replaces(
    server, store
):
    """A step-up: the client was registered with every scope the server supports, the person
    first connected with the smaller set; `secret` answers 403 `insufficient_scope`; they
    connect again with the union, and the call goes through with the new token."""
    configs = parse_servers(
        {"servers": {"ids": {"url": server.url, "auth": "user", "scopes": ["tools"]}}}
    )
    signins = SignIns(store, Sealer(SECRET), PUBLIC, configs)
    alice = ("T1", "UALICE")

    async def scenario() -> None:
        await connect(signins, "UALICE", "alice")
        first = await signins.bearer("ids", *alice)
        assert first is not None and server.provider.access[first].scopes == ["tools"]
        servers = servers_for(signins)
        try:
            tools = {t.name: t for t in await servers.tools(person=alice)}
            outcome = await servers.call(tools["secret"], {}, person=alice)
            assert outcome.sign_in and outcome.scope == "tools admin"
            url = await signins.begin("ids", "T1", "UALICE", KEY, 4, LATER, scope=outcome.scope)
            assert parse_qs(urlsplit(url).query)["scope"] == ["tools admin"]
            query = await browse(url, "alice")
            done = await signins.complete(query["state"], query.get("code"), None)
            assert done.connected, done.why
            second = await signins.bearer("ids", *alice)
            assert second is not None and second != first
            assert sorted(server.provider.access[second].scopes) == ["admin", "tools"]
            row = store.mcp_connection("T1", "UALICE", "ids")
            assert row is not None and set((row.scope or "").split()) == {"tools", "admin"}
            outcome = await servers.call(tools["secret"], {}, person=alice)
            assert (outcome.failed, outcome.text) == (False, "the secret, for alice")
            # A 403 for scope the person was granted already is not asked again: no loop.
            await connect(signins, "UALICE", "alice")  # `tools` only, as configured
            row = store.mcp_connection("T1", "UALICE", "ids")
            assert row is not None
            store.save_connection(type(row)(**{**row.__dict__, "scope": "tools admin"}))
            outcome = await servers.call(tools["secret"], {}, person=alice)
            assert outcome.failed and not outcome.sign_in
            assert "was granted already" in outcome.text
        finally:
            await servers.close()

    asyncio.run(scenario())
