"""HTTP mode (docs/architecture.md#slack-and-the-model): Bolt behind a real ASGI server, events at
/slack/events; installed through OAuth, Bolt's install flow at /slack/install and
/slack/oauth_redirect (docs/slack-setup.md, "Distributing the app").

Bolt only ever sees requests that `SlackRequestGuard` has found signed by Slack, small enough
and sent in time; `assistant.serving.web_server` bounds what reaches the guard (request heads, idle
connections, how many at once)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TextIO

from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from assistant.app import create_assistant
from assistant.serving.health import StoreHealth
from assistant.serving.request_guard import SlackRequestGuard
from assistant.serving.web_server import Server, listening_socket, server_config
from assistant.settings.environment import Settings, SettingsError
from assistant.slack.bot_identity import BotIdentity
from assistant.slack.tokens import refused_bot_token
from assistant.telemetry.setup import check as check_telemetry
from context.storage import open_store

INSTALL_PATH, REDIRECT_PATH = "/slack/install", "/slack/oauth_redirect"  # Bolt's defaults
INSTALLS_FULL = "Too many installs are under way just now: try again in a few minutes.\n"
RETRY_LATER = {"Retry-After": "60"}
NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
CALLBACK_PATH = "/mcp/oauth/callback"  # assistant.mcp.signin.tokens.CALLBACK_PATH
STATE_SECRET_UNUSED = (
    "assistant serve: SLACK_STATE_SECRET is not used: Bolt keeps each install's state in the "
    "database (used once, expiring), tied to the browser by its state cookie"
)


def create_web_app(
    settings: Settings,
    trace: TextIO | None = None,
    identity: BotIdentity | None = None,
    runs: bool = True,
) -> Starlette:
    """The ASGI app; the assistant is built at startup, inside the server's event loop.
    `runs`: False for the ingress role (`create_assistant`)."""
    assert settings.slack.signing_secret is not None

    @asynccontextmanager
    async def lifespan(web: Starlette) -> AsyncIterator[None]:
        assistant = create_assistant(settings, trace, identity=identity, runs=runs)
        if runs:  # the ingress role asks no model
            assistant.check_model_server(sys.stderr)
        assistant.check_mcp_servers(sys.stderr)  # none in the ingress role: no runs, no servers
        web.state.assistant = assistant
        web.state.handler = AsyncSlackRequestHandler(assistant.app)
        web.state.health = StoreHealth(assistant.store)
        try:
            yield
        finally:
            web.state.health.close()
            await assistant.close()

    async def slack_events(request: Request) -> Response:
        # When it arrived: its files and links are read until a deadline counted from here.
        arrival = {"received_at": asyncio.get_running_loop().time()}
        response: Response = await request.app.state.handler.handle(request, arrival)
        return response

    async def healthz(request: Request) -> Response:
        # Anyone can ask: the answer says whether the app can work, nothing about its work.
        if await request.app.state.health.ok():
            return JSONResponse({"ok": True})
        return JSONResponse({"ok": False, "error": "the store cannot be reached"}, status_code=503)

    async def installs(request: Request) -> Response:
        # Bolt's own OAuth flow: the install page (a state, and its cookie) and Slack's
        # redirect back (the state checked, the code exchanged, the installation stored).
        flow = request.app.state.assistant.app.oauth_flow
        if request.url.path == INSTALL_PATH and await flow.settings.state_store.async_full():
            return PlainTextResponse(INSTALLS_FULL, status_code=429, headers=RETRY_LATER)
        response: Response = await request.app.state.handler.handle(request)
        return response

    async def sign_in_callback(request: Request) -> Response:
        # A person's browser back from an MCP server's authorization server: anyone may
        # send anything here; the state (single use, bound to a person and a run) decides.
        callback = request.app.state.assistant.sign_in_callback
        if callback is None:
            return PlainTextResponse("No MCP server signs people in here.\n", status_code=404)
        query = request.query_params
        page = await callback.returned(
            query.get("state", ""), query.get("code"), query.get("error")
        )
        return PlainTextResponse(page.text + "\n", status_code=page.status, headers=NO_STORE)

    oauth = [
        Route(path, installs, methods=["GET"])
        for path in (INSTALL_PATH, REDIRECT_PATH)
        if settings.slack.oauth
    ]
    return Starlette(
        routes=[
            Route("/slack/events", slack_events, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route(CALLBACK_PATH, sign_in_callback, methods=["GET"]),
            *oauth,
        ],
        middleware=[
            Middleware(
                SlackRequestGuard,
                signing_secret=settings.slack.signing_secret.get_secret_value(),
                path="/slack/events",
            )
        ],
        lifespan=lifespan,
    )


def serve(settings: Settings, host: str = "0.0.0.0", runs: bool = True) -> None:
    if settings.slack.state_secret is not None:
        print(STATE_SECRET_UNUSED, file=sys.stderr, flush=True)
    identity = None
    if settings.slack.bot_token is not None:
        # As `assistant run` does: a token Slack refuses is one clear message at start,
        # rather than a server that answers every event with failures.
        token = settings.slack.bot_token.get_secret_value()
        identity = BotIdentity(token)
        problems = asyncio.run(refused_bot_token("serve", token, settings.slack.api_base, identity))
        if problems:
            raise SettingsError("\n".join(problems))
    check_telemetry()  # a protocol OTEL_* asks for that cannot be used: one line, status 2
    listening = listening_socket(host, settings.slack.port)  # PortUnavailable: one line, status 2
    # The app opens its store in the server's startup, where a failure is the server's
    # traceback: open it once here first, so that a store that cannot be opened is one line
    # (StoreUnavailable, printed by cli.main) and exit status 2, as for `run`. Last of the
    # checks: a start another one refuses leaves no new store behind.
    try:
        open_store(settings.storage.database_url).close()
    except BaseException:
        listening.close()
        raise
    web = create_web_app(settings, identity=identity, runs=runs)
    Server(server_config(web, host=host, port=settings.slack.port)).run(sockets=[listening])
