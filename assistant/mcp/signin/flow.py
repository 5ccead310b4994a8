"""The MCP authorization flow (the 2025-11-25 specification's "Authorization"), split at the
browser's redirect so that a sign-in may span a person's round trip and a restart.

The SDK's `OAuthClientProvider` runs the whole flow in one coroutine, waiting on its
callback handler: a Slack bot cannot hold that coroutine while a person finds the link, nor
keep it over a restart. So the steps are taken here one by one, each on the SDK's own
pieces: the discovery URLs and the parsing of the 401's `WWW-Authenticate`
(`mcp.client.auth.utils`), its metadata models (`ProtectedResourceMetadata`, `OAuthMetadata`,
OpenID discovery among the URLs tried), `PKCEParameters` (S256), dynamic client registration
(`create_client_registration_request`, `handle_registration_response`) and `OAuthToken`.
What the SDK keeps in memory between the steps (the state, the PKCE verifier, the client) is
kept in the store, sealed (`tokens.py`)."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from urllib.parse import quote, urlencode

import httpx2
from mcp.client.auth.oauth2 import PKCEParameters
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    create_client_registration_request,
    create_oauth_metadata_request,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
    handle_auth_metadata_response,
    handle_protected_resource_response,
    handle_registration_response,
)
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url
from pydantic import AnyUrl, ValidationError

CLIENT_NAME = "Aya (Slack assistant)"
MAX_BODY = 64_000  # bytes of a metadata or token answer read


class SignInError(Exception):
    """A step of the flow failed; its message says which, never a secret."""


@dataclass(frozen=True)
class Discovery:
    """What the server and its authorization server say of themselves."""

    server_url: str
    resource: str  # RFC 8707's `resource` parameter
    metadata: OAuthMetadata
    scope: str | None  # asked for: the 401's, else the resource's, else the file's

    @property
    def issuer(self) -> str:
        return str(self.metadata.issuer)


@dataclass(frozen=True)
class Authorization:
    """A sign-in begun: the URL the person's browser opens, and what the callback needs."""

    url: str
    state: str  # in the URL only; the store keeps its hash
    verifier: str  # PKCE's, sealed in the store


def state_hash(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


async def discover(
    http: httpx2.AsyncClient, server_url: str, scopes: tuple[str, ...] | None = None
) -> Discovery:
    """The 401 an unauthenticated request gets, its `WWW-Authenticate` (resource metadata
    URL, scope), the Protected Resource Metadata, then the authorization server's metadata
    (RFC 8414, or OpenID discovery), in the specification's order of URLs."""
    probe = await http.post(
        server_url,
        json={"jsonrpc": "2.0", "id": 0, "method": "ping"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    await probe.aread()
    if probe.status_code != 401:
        raise SignInError(f"the server answered HTTP {probe.status_code}, not 401, without a token")
    prm: ProtectedResourceMetadata | None = None
    for url in build_protected_resource_metadata_discovery_urls(
        extract_resource_metadata_from_www_auth(probe), server_url
    ):
        prm = await handle_protected_resource_response(await _get(http, url))
        if prm is not None:
            break
    resource = resource_url_from_server_url(server_url)
    if prm is not None:
        if not check_resource_allowed(resource, str(prm.resource)):
            raise SignInError("the server's resource metadata names another resource")
        resource = str(prm.resource)
    issuer_url = str(prm.authorization_servers[0]) if prm is not None else None
    metadata: OAuthMetadata | None = None
    for url in build_oauth_authorization_server_metadata_discovery_urls(issuer_url, server_url):
        found, metadata = await handle_auth_metadata_response(await _get(http, url))
        if metadata is not None or not found:
            break
    if metadata is None:
        raise SignInError("the server's authorization server metadata could not be found")
    if metadata.code_challenge_methods_supported is not None and (
        "S256" not in metadata.code_challenge_methods_supported
    ):
        raise SignInError("the authorization server does not support PKCE with S256")
    scope = extract_scope_from_www_auth(probe)
    if scope is None and prm is not None and prm.scopes_supported:
        scope = " ".join(prm.scopes_supported)
    if scopes is not None:  # the file's word is the last: least privilege is the admin's call
        scope = " ".join(scopes) or None
    return Discovery(server_url, resource, metadata, scope)


async def register(
    http: httpx2.AsyncClient, discovery: Discovery, redirect_uri: str
) -> OAuthClientInformationFull:
    """A client registered with the authorization server (RFC 7591), kept per server."""
    if discovery.metadata.registration_endpoint is None:
        raise SignInError(
            "the authorization server takes no registrations: give the server's client_id "
            "(and client_secret_env) in ASSISTANT_MCP_FILE"
        )
    # Registered for every scope the server may ask (a step-up asks for more than the first
    # sign-in): an authorization server may refuse scopes its client did not register (the
    # SDK's does). Each sign-in still asks for the smaller set it needs.
    supported = discovery.metadata.scopes_supported
    request = create_client_registration_request(
        discovery.metadata,
        OAuthClientMetadata(
            redirect_uris=[AnyUrl(redirect_uri)],
            client_name=CLIENT_NAME,
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=" ".join(supported) if supported else discovery.scope,
            token_endpoint_auth_method="client_secret_post",
            application_type="web",
        ),
        discovery.issuer,
    )
    response = await http.send(request)
    try:
        return await handle_registration_response(response)
    except Exception as exc:
        raise SignInError(
            f"the client registration was refused (HTTP {response.status_code})"
        ) from exc


def authorize(
    discovery: Discovery, client: OAuthClientInformationFull, redirect_uri: str
) -> Authorization:
    """The authorize URL of a new sign-in: a fresh state and PKCE pair (S256)."""
    pkce = PKCEParameters.generate()
    state = secrets.token_urlsafe(32)
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": pkce.code_challenge,
        "code_challenge_method": "S256",
        "resource": discovery.resource,
    }
    if discovery.scope:
        params["scope"] = discovery.scope
    endpoint = str(discovery.metadata.authorization_endpoint)
    joiner = "&" if "?" in endpoint else "?"
    return Authorization(f"{endpoint}{joiner}{urlencode(params)}", state, pkce.code_verifier)


async def exchange(
    http: httpx2.AsyncClient,
    discovery: Discovery,
    client: OAuthClientInformationFull,
    code: str,
    verifier: str,
    redirect_uri: str,
) -> OAuthToken:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
        "resource": discovery.resource,
    }
    return await _token(http, discovery, client, data, "the code exchange")


async def refresh(
    http: httpx2.AsyncClient,
    discovery: Discovery,
    client: OAuthClientInformationFull,
    refresh_token: str,
) -> OAuthToken:
    data = {
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "resource": discovery.resource,
    }
    return await _token(http, discovery, client, data, "the refresh")


async def revoke(
    http: httpx2.AsyncClient, discovery: Discovery, client: OAuthClientInformationFull, token: str
) -> bool:
    """The token revoked at the authorization server (RFC 7009), where it has an endpoint;
    whether it said so."""
    endpoint = discovery.metadata.revocation_endpoint
    if endpoint is None:
        return False
    data, headers = _client_auth(client, {"token": token})
    response = await http.post(str(endpoint), data=data, headers=headers)
    await response.aread()
    return response.status_code == 200


async def _token(
    http: httpx2.AsyncClient,
    discovery: Discovery,
    client: OAuthClientInformationFull,
    data: dict[str, str],
    what: str,
) -> OAuthToken:
    data, headers = _client_auth(client, data)
    response = await http.post(str(discovery.metadata.token_endpoint), data=data, headers=headers)
    body = await response.aread()
    if response.status_code != 200 or len(body) > MAX_BODY:
        raise SignInError(f"{what} was refused (HTTP {response.status_code})")
    try:
        token = OAuthToken.model_validate_json(body)
    except ValidationError:
        raise SignInError(f"{what} answered no token") from None
    if token.scope is None:  # RFC 6749 §5.1: the scope asked for
        token.scope = discovery.scope
    return token


def _client_auth(
    client: OAuthClientInformationFull, data: dict[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The client's credentials as its registration says (RFC 6749 §2.3.1)."""
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    method = client.token_endpoint_auth_method or "client_secret_post"
    if client.client_secret and method == "client_secret_basic":
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        return {**data, "client_id": client.client_id}, headers
    data = {**data, "client_id": client.client_id}
    if client.client_secret and method == "client_secret_post":
        data["client_secret"] = client.client_secret
    return data, headers


async def _get(http: httpx2.AsyncClient, url: str) -> httpx2.Response:
    response = await http.send(create_oauth_metadata_request(url))
    return response
