"""People signing in to an `auth: user` server: the flow split at the redirect
(assistant/mcp/signin/), against the SDK's own MCP server and authorization server
(tests/mcp_servers/identity.py) on loopback, a fake browser following the authorize URL the
way a person's does. Tokens sealed at rest, refreshed, revoked; states single use."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from cryptography.fernet import Fernet
from sqlalchemy import create_engine, text

from assistant.mcp.config import parse_servers
from assistant.mcp.signin.sealing import Sealer
from assistant.mcp.signin.tokens import CALLBACK_PATH, SignIns
from context.storage import Store, ThreadKey, open_store
from tests.mcp_servers.identity import IdentityServer

PUBLIC = "https://aya.example.com"
KEY = ThreadKey("T1", "C1", "1700000000.000100")
UNTIL = datetime.now(UTC) + timedelta(minutes=15)


@pytest.fixture(scope="module")
def server() -> Iterator[IdentityServer]:
    with IdentityServer() as running:
        yield running


@pytest.fixture
def db(tmp_path: Path) -> Iterator[tuple[Store, str]]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = open_store(url)
    yield store, url
    store.close()


def sign_ins(store: Store, server: IdentityServer, key: str | None = None) -> SignIns:
    configs = parse_servers({"servers": {"ids": {"url": server.url, "auth": "user"}}})
    return SignIns(store, Sealer(key or SECRET), PUBLIC, configs)


SECRET = Fernet.generate_key().decode()


async def browse(url: str, who: str | None = "alice", deny: bool = False) -> dict[str, str]:
    """A person's browser: the authorize URL, the login page (signed in as `who`), redirects
    followed until the app's callback; the callback's query."""
    async with httpx2.AsyncClient() as browser:
        for _ in range(5):
            if url.startswith(PUBLIC + CALLBACK_PATH):
                return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
            if "/login?" in url:
                url += "&deny=1" if deny else f"&who={who}"
            answer = await browser.get(url)
            assert answer.status_code in (302, 303, 307), (answer.status_code, answer.text)
            url = answer.headers["location"]
    raise AssertionError("the browser never came back to the callback")


async def connect(
    signins: SignIns, user: str, who: str, index: int = 3, key: ThreadKey = KEY
) -> None:
    url = await signins.begin("ids", key.team, user, key, index, UNTIL)
    query = await browse(url, who)
    done = await signins.complete(query["state"], query.get("code"), query.get("error"))
    assert done.connected, done.why
    assert done.sign_in is not None and (done.sign_in.user, done.sign_in.index) == (user, index)


def test_two_people_each_connect_with_their_own_identity(server, db):
    store, url = db
    signins = sign_ins(store, server)

    async def scenario() -> None:
        await connect(signins, "UALICE", "alice")
        await connect(signins, "UBOB", "bob")
        assert await signins.bearer("ids", "T1", "UCAROL") is None  # never connected
        for user, who in (("UALICE", "alice"), ("UBOB", "bob")):
            token = await signins.bearer("ids", "T1", user)
            assert token is not None
            async with httpx2.AsyncClient() as http:
                answer = await http.post(
                    server.url,
                    json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                    headers={"Authorization": f"Bearer {token}",
                             "Accept": "application/json, text/event-stream"},
                )  # fmt: skip
            assert answer.status_code != 401
            assert server.provider.access[token].subject == who

    asyncio.run(scenario())
    # The `resource` parameter (RFC 8707) named the MCP server; one registration for both.
    assert set(server.provider.resources[-2:]) == {server.url}
    tokens = list(server.provider.access)
    engine = create_engine(url)
    with engine.connect() as connection:
        dump = "\n".join(
            str(row) for table in ("mcp_connections", "mcp_sign_ins", "mcp_clients")
            for row in connection.execute(text(f"SELECT * FROM {table}"))
        )  # fmt: skip
    engine.dispose()
    assert "UALICE" in dump
    assert not any(token in dump for token in tokens)  # sealed at rest
    assert not any(
        c.client_secret and c.client_secret in dump for c in server.provider.clients.values()
    )


def test_a_state_is_single_use_and_a_forged_one_is_refused(server, db):
    store, _ = db
    signins = sign_ins(store, server)

    async def scenario() -> None:
        url = await signins.begin("ids", "T1", "UALICE", KEY, 3, UNTIL)
        query = await browse(url, "alice")
        forged = await signins.complete(query["state"] + "x", query["code"], None)
        assert forged.sign_in is None and not forged.connected
        first = await signins.complete(query["state"], query["code"], None)
        assert first.connected
        again = await signins.complete(query["state"], query["code"], None)
        assert again.sign_in is None and not again.connected
        assert "used" in again.why

    asyncio.run(scenario())


def test_a_state_binds_its_person_whoever_opens_the_link(server, db):
    """Bob's browser completing Alice's link connects no one but Alice (the state's person):
    Bob is still not connected, and Alice's run is the one the completion names."""
    store, _ = db
    signins = sign_ins(store, server)

    async def scenario() -> None:
        alices = await signins.begin("ids", "T1", "UALICE", KEY, 3, UNTIL)
        bobs = await signins.begin("ids", "T1", "UBOB", KEY, 5, UNTIL)
        query = await browse(alices, "alice")
        done = await signins.complete(query["state"], query["code"], None)
        assert done.sign_in is not None and done.sign_in.user == "UALICE"
        assert await signins.bearer("ids", "T1", "UBOB") is None
        # Bob's own link still works, for Bob only.
        query = await browse(bobs, "bob")
        done = await signins.complete(query["state"], query["code"], None)
        assert done.sign_in is not None and (done.sign_in.user, done.sign_in.index) == ("UBOB", 5)

    asyncio.run(scenario())


def test_denied_at_the_authorization_server_is_not_connected(server, db):
    store, _ = db
    signins = sign_ins(store, server)

    async def scenario() -> None:
        url = await signins.begin("ids", "T1", "UALICE", KEY, 3, UNTIL)
        query = await browse(url, deny=True)
        done = await signins.complete(query["state"], query.get("code"), query.get("error"))
        assert done.sign_in is not None and not done.connected
        assert done.why == "the authorization server answered access_denied"
        assert await signins.bearer("ids", "T1", "UALICE") is None

    asyncio.run(scenario())


def test_an_expired_link_is_not_connected(server, db):
    store, _ = db
    signins = sign_ins(store, server)

    async def scenario() -> None:
        past = datetime.now(UTC) - timedelta(seconds=1)
        url = await signins.begin("ids", "T1", "UALICE", KEY, 3, past)
        query = await browse(url, "alice")
        done = await signins.complete(query["state"], query["code"], None)
        assert not done.connected and done.why == "the sign-in link expired"

    asyncio.run(scenario())


def test_an_expired_token_is_refreshed_and_a_revoked_one_asks_again(server, db):
    store, _ = db
    signins = sign_ins(store, server)

    async def scenario() -> None:
        await connect(signins, "UALICE", "alice")
        first = await signins.bearer("ids", "T1", "UALICE")
        # The token's time is up (as the store says, and at the server).
        row = store.mcp_connection("T1", "UALICE", "ids")
        assert row is not None
        sealed = signins.sealer.open(row.sealed)
        sealed["expires_at"] = 0
        store.save_connection(type(row)(**{**row.__dict__, "sealed": signins.sealer.seal(sealed)}))
        server.provider.expire_access()
        refreshed_before = server.provider.refreshed
        second = await signins.bearer("ids", "T1", "UALICE")
        assert second is not None and second != first
        assert server.provider.refreshed == refreshed_before + 1
        assert server.provider.access[second].subject == "alice"
        # Revoked at the server and expired: the refresh is refused, the person connects again.
        server.provider.revoke("alice")
        row = store.mcp_connection("T1", "UALICE", "ids")
        assert row is not None
        sealed = signins.sealer.open(row.sealed)
        sealed["expires_at"] = 0
        store.save_connection(type(row)(**{**row.__dict__, "sealed": signins.sealer.seal(sealed)}))
        assert await signins.bearer("ids", "T1", "UALICE") is None
        assert store.mcp_connection("T1", "UALICE", "ids") is None

    asyncio.run(scenario())


def test_disconnect_revokes_at_the_server_and_drops_the_row(server, db):
    store, _ = db
    signins = sign_ins(store, server)

    async def scenario() -> None:
        await connect(signins, "UALICE", "alice")
        token = await signins.bearer("ids", "T1", "UALICE")
        assert await signins.disconnect("ids", "T1", "UALICE") is True
        assert token not in server.provider.access
        assert store.mcp_connection("T1", "UALICE", "ids") is None
        assert await signins.disconnect("ids", "T1", "UALICE") is None

    asyncio.run(scenario())


def test_a_rotated_key_still_opens_and_a_dropped_one_asks_again(server, db):
    store, _ = db
    old = SECRET
    new = Fernet.generate_key().decode()

    async def scenario() -> None:
        await connect(sign_ins(store, server, old), "UALICE", "alice")
        assert await sign_ins(store, server, f"{new},{old}").bearer("ids", "T1", "UALICE")
        assert await sign_ins(store, server, new).bearer("ids", "T1", "UALICE") is None

    asyncio.run(scenario())


def test_a_server_that_cannot_start_a_sign_in_says_why(db):
    store, _ = db
    configs = parse_servers({"servers": {"ids": {"url": "http://127.0.0.1:9/mcp", "auth": "user"}}})
    signins = SignIns(store, Sealer(SECRET), PUBLIC, configs)
    with pytest.raises(ValueError, match=r"could not be reached \(ConnectError\)"):
        asyncio.run(signins.begin("ids", "T1", "UALICE", KEY, 3, UNTIL))
