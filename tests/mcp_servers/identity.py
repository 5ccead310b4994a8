"""An MCP server protected by the SDK's own authorization-server support (`mcp.server.auth`),
for the sign-in tests: an in-memory `OAuthAuthorizationServerProvider` whose login page is a
stand-in for a person signing in (`/login?tx=…&who=alice`, or `&deny=1`), dynamic client
registration and revocation on, and one tool, `whoami`, that answers with the identity of the
token the call carried. Served on loopback in a thread of the test's process (`IdentityServer`)."""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp_types import ToolAnnotations
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

SCOPE = "tools"
# A scope the `secret` tool needs beyond SCOPE: without it the call answers HTTP 403
# `insufficient_scope` (RFC 6750 §3.1), as a server asking for a step-up does.
ADMIN = "admin"


@dataclass
class Provider:
    """The authorization server's memory: clients, sign-ins under way, codes and tokens."""

    base: str
    access_seconds: int = 3600
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    pending: dict[str, tuple[str, AuthorizationParams]] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access: dict[str, AccessToken] = field(default_factory=dict)
    refresh: dict[str, RefreshToken] = field(default_factory=dict)
    refreshed: int = 0  # refresh grants served
    revoked: list[str] = field(default_factory=list)  # subjects whose tokens were revoked
    resources: list[str | None] = field(default_factory=list)  # each code's `resource`

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        tx = secrets.token_urlsafe(16)
        self.pending[tx] = (client.client_id or "", params)
        return f"{self.base}/login?tx={tx}"

    def login(self, tx: str, who: str | None, deny: bool) -> str:
        """Where the login page sends the browser: back to the client's redirect URI."""
        client_id, params = self.pending.pop(tx)
        if deny or who is None:
            return construct_redirect_uri(
                str(params.redirect_uri), error="access_denied", state=params.state
            )
        code = secrets.token_urlsafe(16)
        self.resources.append(params.resource)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=who,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(
            authorization_code.client_id,
            authorization_code.scopes,
            authorization_code.resource,
            authorization_code.subject,
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        self.refreshed += 1
        return self._issue(
            refresh_token.client_id,
            scopes or refresh_token.scopes,
            refresh_token.resource,
            refresh_token.subject,
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.revoke(token.subject or "")

    def revoke(self, subject: str) -> None:
        """Every token of `subject` refused from now on (as an admin at the server does)."""
        self.revoked.append(subject)
        for tokens in (self.access, self.refresh):
            for key in [k for k, v in tokens.items() if v.subject == subject]:
                del tokens[key]

    def expire_access(self) -> None:
        """Every access token past its expiry (refresh tokens stay good)."""
        for token in self.access.values():
            token.expires_at = int(time.time()) - 1

    def _issue(
        self, client_id: str, scopes: list[str], resource: str | None, subject: str | None
    ) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + self.access_seconds
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=expires,
            resource=resource,
            subject=subject,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject=subject
        )
        return OAuthToken(
            access_token=access,
            expires_in=self.access_seconds,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )


class _ScopeGate:
    """The MCP endpoint's calls of `secret` refused with 403 `insufficient_scope` for a token
    without ADMIN: the SDK checks one set of scopes for the whole endpoint, not per tool."""

    def __init__(self, app: Any, provider: Provider) -> None:
        self.app = app
        self.provider = provider

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            sent = json.loads(body)
        except ValueError:
            sent = None
        calls_secret = (
            isinstance(sent, dict)
            and sent.get("method") == "tools/call"
            and (sent.get("params") or {}).get("name") == "secret"
        )
        bearer = dict(scope["headers"]).get(b"authorization", b"").decode()
        token = self.provider.access.get(bearer.removeprefix("Bearer "))
        if calls_secret and token is not None and ADMIN not in token.scopes:
            challenge = f'Bearer error="insufficient_scope", scope="{SCOPE} {ADMIN}"'
            response = PlainTextResponse(
                "insufficient scope", status_code=403, headers={"WWW-Authenticate": challenge}
            )
            await response(scope, receive, send)
            return
        given = False

        async def again() -> Any:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, again, send)


class IdentityServer:
    """The server on a port the OS chose: MCP at `url`, its authorization server at `base`."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self.base = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self.url = f"{self.base}/mcp"
        self.provider = Provider(self.base)
        server = MCPServer(
            "identity",
            auth_server_provider=self.provider,
            auth=AuthSettings(
                issuer_url=self.base,  # type: ignore[arg-type]
                resource_server_url=self.url,  # type: ignore[arg-type]
                client_registration_options=ClientRegistrationOptions(
                    enabled=True, valid_scopes=[SCOPE, ADMIN], default_scopes=[SCOPE]
                ),
                revocation_options=RevocationOptions(enabled=True),
                required_scopes=[SCOPE],
                validate_token_resource=True,
            ),
        )

        @server.tool(annotations=ToolAnnotations(read_only_hint=True))
        def whoami() -> str:
            """Who the call's token belongs to."""
            token = get_access_token()
            return f"you are {token.subject if token else 'no one'}"

        @server.tool(annotations=ToolAnnotations(read_only_hint=True))
        def secret() -> str:
            """Only for a token with the admin scope (else the call answers 403)."""
            token = get_access_token()
            return f"the secret, for {token.subject if token else 'no one'}"

        @server.custom_route("/login", methods=["GET"])
        async def login(request: Request) -> Response:
            tx = request.query_params.get("tx", "")
            if tx not in self.provider.pending:
                return PlainTextResponse("no such sign-in", status_code=400)
            who = request.query_params.get("who")
            deny = request.query_params.get("deny") == "1"
            return RedirectResponse(self.provider.login(tx, who, deny), status_code=302)

        app: Any = _ScopeGate(server.streamable_http_app(), self.provider)
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._server.serve(sockets=[self._sock]))

    def __enter__(self) -> IdentityServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._server.force_exit = True
        self._thread.join(60)
        self._sock.close()
