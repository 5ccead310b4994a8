"""The deployment's own sign-in to an `auth: deployment` server
(docs/configuration.md#one-sign-in-for-everyone): made once by an admin with `assistant mcp
login SERVER`, then carried by every call of that server, whoever asks.

The flow is the people's (`tokens.py`: discovery, registration, PKCE, `resource`), for a
principal that is no person: its rows sit in the same tables under `DEPLOYMENT_TEAM` and
`DEPLOYMENT_USER`, which no Slack id can be (ids are capitals and digits), so the same
refresh, revocation and listing serve it. The browser comes back to the running app's
`/mcp/oauth/callback`, as a person's does, rather than to a loopback port the command would
serve (RFC 8252): the client registered for the server knows that one redirect URI only, and
an authorization server may match redirect URIs exactly (the SDK's does), so a loopback
redirect would take a second registration per login. The command waits on the store."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from assistant.mcp.signin.flow import state_hash
from context.storage import ThreadKey
from context.storage.async_store import async_store
from context.storage.tables import moment

if TYPE_CHECKING:  # the sealing (cryptography) is loaded only where a sign-in is served
    from assistant.mcp.signin.tokens import SignIns

DEPLOYMENT_TEAM = "*"
DEPLOYMENT_USER = "deployment"
# A sign-in row is bound to a thread; the deployment's to none (the callback resumes nothing).
DEPLOYMENT_KEY = ThreadKey(DEPLOYMENT_TEAM, "-", "-")
# Once the callback took the sign-in, the code exchange is bounded by its own HTTP timeouts
# (discovery, registration and the token request, each `tokens.HTTP_SECONDS` at most): past
# them it failed.
EXCHANGE_SECONDS = 60.0
MISSING = (
    "the MCP server {server} is reached with the deployment's sign-in, and there is none (never "
    "made, revoked or refused): an admin runs `assistant mcp login {server}`"
)

STEP_UP = (
    "the MCP server {server} asks the deployment's sign-in for more scope ({scope}): an admin "
    "runs `assistant mcp login {server} --scope '{scope}'`"
)


@dataclass(frozen=True)
class Login:
    """A deployment sign-in begun: the URL the admin's browser opens, and its state's hash."""

    server: str
    url: str
    state_hash: str
    started: str  # moment(): a connection made at or after it is this login's


async def begin_login(
    sign_ins: SignIns, server: str, until: datetime, scope: str | None = None
) -> Login:
    """ValueError saying why when the server's sign-in cannot start. `scope`: more than the
    server's usual scopes (a step-up), added to those the deployment has."""
    started = moment(datetime.now(UTC))
    url = await sign_ins.begin(
        server, DEPLOYMENT_TEAM, DEPLOYMENT_USER, DEPLOYMENT_KEY, 0, until, scope=scope
    )
    state = parse_qs(urlsplit(url).query)["state"][0]
    return Login(server, url, state_hash(state), started)


async def await_login(
    sign_ins: SignIns,
    login: Login,
    until: datetime,
    poll: float = 0.5,
    exchange_seconds: float = EXCHANGE_SECONDS,
) -> str | None:
    """None once the browser came back and the deployment is connected; else why not (the
    page the browser shows says the authorization server's reason). At `until` the sign-in
    is withdrawn, so that its link stops working. `exchange_seconds`: how long the callback
    may take to keep the token once it took the sign-in."""
    store = sign_ins.store
    reader = async_store(store)
    taken_at: float | None = None
    loop = asyncio.get_running_loop()
    while True:
        row = await reader.read(
            store.mcp_connection, DEPLOYMENT_TEAM, DEPLOYMENT_USER, login.server
        )
        if row is not None and row.connected_at >= login.started:
            return None
        if taken_at is None and not await reader.read(store.sign_in_pending, login.state_hash):
            taken_at = loop.time()
        if taken_at is not None and loop.time() - taken_at >= exchange_seconds:
            return "the sign-in was not completed (the browser's page says why)"
        if taken_at is None and datetime.now(UTC) >= until:
            await async_store(store).write(store.take_sign_in, login.state_hash)
            return f"no sign-in before {until:%Y-%m-%dT%H:%M:%SZ}"
        await asyncio.sleep(poll)
