"""People's tokens for the `auth: user` servers: a sign-in begun (its state and PKCE verifier
kept, sealed, under the state's hash), completed by the callback (state taken once, code
exchanged, tokens sealed and kept per workspace, person and server), handed to that person's
calls (refreshed before they expire; a refresh refused means connect again), and revoked.

Nothing here logs, returns or raises a token: `bearer` hands one to the person's own
connection (`assistant.mcp.servers`), and to nothing else."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import httpx2
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import ValidationError

from assistant.mcp.config import ServerConfig
from assistant.mcp.signin.flow import (
    Discovery,
    SignInError,
    authorize,
    discover,
    exchange,
    refresh,
    register,
    revoke,
    state_hash,
)
from assistant.mcp.signin.sealing import Sealer, SealError
from context.storage import Store, ThreadKey
from context.storage.async_store import async_store
from context.storage.mcp_connections import ConnectionRow, SignInRow
from context.storage.tables import moment

log = logging.getLogger(__name__)

CALLBACK_PATH = "/mcp/oauth/callback"
REFRESH_MARGIN = 60.0  # seconds: a token this close to its expiry is refreshed before a call
HTTP_SECONDS = 15.0
MAX_STATE = 200  # characters of a state the callback reads at all


@dataclass(frozen=True)
class Completion:
    """What a callback did: the sign-in it completed (None: no such state, or used), and
    whether the person is now connected, else why not (no secret in it)."""

    sign_in: SignInRow | None
    connected: bool
    why: str = ""
    # The person's other sign-ins to the server under way (other threads waiting for the same
    # connection), taken: connected now, they go on too.
    others: tuple[SignInRow, ...] = ()


class SignIns:
    """The `auth: user` servers' sign-ins, over the store."""

    def __init__(
        self,
        store: Store,
        sealer: Sealer,
        public_url: str,
        configs: Sequence[ServerConfig],
        http: Callable[[], httpx2.AsyncClient] | None = None,
    ) -> None:
        self.store = store
        self.sealer = sealer
        self.redirect_uri = public_url.rstrip("/") + CALLBACK_PATH
        self.configs = {c.name: c for c in configs if c.signs_in}
        self._http = http or (lambda: httpx2.AsyncClient(timeout=HTTP_SECONDS))
        self._discovered: dict[str, Discovery] = {}

    def __repr__(self) -> str:
        return f"SignIns({sorted(self.configs)})"

    async def begin(
        self,
        server: str,
        team: str,
        user: str,
        key: ThreadKey,
        index: int,
        until: datetime,
        scope: str | None = None,
    ) -> str:
        """A new sign-in of `user` to `server` for the call at entry `index` of `key`'s log:
        the authorize URL for their browser (the state in it, nowhere else). `scope`: a
        step-up's (a 403 `insufficient_scope`): asked for with the usual scopes and those the
        person has, so that the new token replaces the old without losing any. ValueError
        saying why when the server or its authorization server cannot start one."""
        try:
            async with self._http() as http:
                discovery = await self._discovery(http, server)
                client = await self._client(http, server, discovery)
        except (SignInError, httpx2.HTTPError, ValidationError) as exc:
            raise ValueError(
                _why(exc)
                if not isinstance(exc, ValidationError)
                else "the authorization server's answer was not understood"
            ) from None
        if scope is not None:
            had = await async_store(self.store).read(self.store.mcp_connection, team, user, server)
            discovery = replace(
                discovery, scope=union(discovery.scope, had.scope if had else None, scope)
            )
        begun = authorize(discovery, client, self.redirect_uri)
        row = SignInRow(
            team,
            user,
            server,
            key,
            index,
            self.sealer.seal(
                {"verifier": begun.verifier, "issuer": discovery.issuer, "scope": discovery.scope}
            ),
            moment(until),
        )
        await async_store(self.store).write(self.store.save_sign_in, state_hash(begun.state), row)
        return begun.url

    async def complete(self, state: str, code: str | None, error: str | None) -> Completion:
        """The callback's query: its state taken (single use), then the code exchanged or the
        authorization server's error said."""
        if not state or len(state) > MAX_STATE:
            return Completion(None, False, "no sign-in has this state")
        row = await async_store(self.store).write(self.store.take_sign_in, state_hash(state))
        if row is None:
            return Completion(None, False, "no sign-in has this state (used, replaced or forged)")
        if row.expires_at < moment(datetime.now(UTC)):
            return Completion(row, False, "the sign-in link expired")
        if error is not None or not code:
            said = "".join(c for c in (error or "no code")[:60] if c.isalnum() or c in "_-")
            return Completion(row, False, f"the authorization server answered {said}")
        config = self.configs.get(row.server)
        if config is None:
            return Completion(row, False, "the server is no longer in ASSISTANT_MCP_FILE")
        try:
            begun = self.sealer.open(row.sealed)
            verifier = str(begun["verifier"])
            async with self._http() as http:
                discovery = await self._discovery(http, row.server)
                if isinstance(begun.get("scope"), str):  # a step-up's, as asked
                    discovery = replace(discovery, scope=begun["scope"])
                client = await self._client(http, row.server, discovery)
                token = await exchange(http, discovery, client, code, verifier, self.redirect_uri)
        except (SignInError, SealError, httpx2.HTTPError, KeyError) as exc:
            return Completion(row, False, _why(exc))
        await self._keep(row.team, row.user, row.server, token, moment(datetime.now(UTC)))
        others = await async_store(self.store).write(
            self.store.take_sign_ins, row.team, row.user, row.server
        )
        now = moment(datetime.now(UTC))
        return Completion(row, True, others=tuple(o for o in others if o.expires_at >= now))

    async def bearer(self, server: str, team: str, user: str) -> str | None:
        """The person's access token for the server, refreshed first when it is about to
        expire; None when they are not connected (never, revoked, a refresh refused: they
        connect again)."""
        store = async_store(self.store)
        row = await store.read(self.store.mcp_connection, team, user, server)
        if row is None:
            return None
        try:
            tokens = self.sealer.open(row.sealed)
        except SealError:
            log.warning("%s's connection to %s opens with no key: they connect again", user, server)
            await store.write(self.store.delete_connection, team, user, server)
            return None
        expires = tokens.get("expires_at")
        if isinstance(expires, int | float) and expires - REFRESH_MARGIN <= time.time():
            return await self._refreshed(row, tokens)
        access = tokens.get("access_token")
        return access if isinstance(access, str) else None

    async def granted(self, server: str, team: str, user: str) -> str | None:
        """The scope the person's token was granted (None: not connected, or not said)."""
        row = await async_store(self.store).read(self.store.mcp_connection, team, user, server)
        return row.scope if row is not None else None

    async def forget(self, server: str, team: str, user: str) -> None:
        """The person's tokens for the server dropped (the server refused them)."""
        await async_store(self.store).write(self.store.delete_connection, team, user, server)

    async def disconnect(self, server: str, team: str, user: str) -> bool | None:
        """The connection removed; its tokens revoked at the authorization server where it
        has an endpoint (True), or not (False); None: there was none."""
        row = await async_store(self.store).write(self.store.delete_connection, team, user, server)
        if row is None:
            return None
        if server not in self.configs:
            return False
        try:
            tokens = self.sealer.open(row.sealed)
            async with self._http() as http:
                discovery = await self._discovery(http, server)
                client = await self._client(http, server, discovery)
                done = False
                for kind in ("refresh_token", "access_token"):
                    token = tokens.get(kind)
                    if isinstance(token, str):
                        done = await revoke(http, discovery, client, token) or done
                return done
        except (SignInError, SealError, httpx2.HTTPError) as exc:
            log.warning("%s's tokens for %s not revoked at the server: %s", user, server, _why(exc))
            return False

    async def _refreshed(self, row: ConnectionRow, tokens: dict[str, object]) -> str | None:
        refresh_token = tokens.get("refresh_token")
        if not isinstance(refresh_token, str):
            await self.forget(row.server, row.team, row.user)
            return None
        try:
            async with self._http() as http:
                discovery = await self._discovery(http, row.server)
                client = await self._client(http, row.server, discovery)
                token = await refresh(http, discovery, client, refresh_token)
        except (SignInError, httpx2.HTTPError) as exc:
            log.info("%s's tokens for %s: %s; they connect again", row.user, row.server, _why(exc))
            await self.forget(row.server, row.team, row.user)
            return None
        if token.refresh_token is None:  # RFC 6749 §6: the old one stays good
            token.refresh_token = refresh_token
        await self._keep(row.team, row.user, row.server, token, row.connected_at)
        return token.access_token

    async def _keep(self, team: str, user: str, server: str, token: OAuthToken, at: str) -> None:
        expires_at = time.time() + token.expires_in if token.expires_in is not None else None
        sealed = self.sealer.seal(
            {
                "access_token": token.access_token,
                "refresh_token": token.refresh_token,
                "expires_at": expires_at,
            }
        )
        row = ConnectionRow(
            team,
            user,
            server,
            sealed,
            moment(datetime.fromtimestamp(expires_at, UTC)) if expires_at is not None else None,
            token.scope,
            at,
        )
        await async_store(self.store).write(self.store.save_connection, row)

    async def _discovery(self, http: httpx2.AsyncClient, server: str) -> Discovery:
        found = self._discovered.get(server)
        if found is None:
            config = self.configs[server]
            assert config.url is not None  # auth: user and deployment go with a url (config.py)
            found = await discover(http, config.url, config.scopes)
            self._discovered[server] = found
        return found

    async def _client(
        self, http: httpx2.AsyncClient, server: str, discovery: Discovery
    ) -> OAuthClientInformationFull:
        """The file's client, else the one registered for this server and issuer, else one
        registered now (kept, sealed: a client secret is a secret)."""
        config = self.configs[server]
        if config.client_id is not None:
            secret = config.client_secret.get_secret_value() if config.client_secret else None
            return OAuthClientInformationFull(
                client_id=config.client_id,
                client_secret=secret,
                token_endpoint_auth_method="client_secret_post" if secret else "none",
            )
        store = async_store(self.store)
        sealed = await store.read(self.store.mcp_client, server, discovery.issuer)
        if sealed is not None:
            try:
                return OAuthClientInformationFull.model_validate(self.sealer.open(sealed))
            except (SealError, ValidationError):
                pass  # registered again below
        client = await register(http, discovery, self.redirect_uri)
        await store.write(
            self.store.save_mcp_client,
            server,
            discovery.issuer,
            self.sealer.seal(client.model_dump(mode="json", exclude_none=True)),
            moment(datetime.now(UTC)),
        )
        return client


def union(*scopes: str | None) -> str | None:
    """Scope strings joined, each token once, in the order first seen."""
    tokens = [t for s in scopes if s for t in s.split()]
    return " ".join(dict.fromkeys(tokens)) or None


def _why(exc: BaseException) -> str:
    if isinstance(exc, SignInError | SealError):
        return str(exc)
    return f"the authorization server could not be reached ({type(exc).__name__})"
