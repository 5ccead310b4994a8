"""HTTP mode (SPEC §7): Bolt behind a real ASGI server, events at /slack/events."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import TextIO

import uvicorn
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from assistant.app import create_assistant
from assistant.settings import Settings


def create_web_app(settings: Settings, trace: TextIO | None = None) -> Starlette:
    """The ASGI app; the assistant is built at startup, inside the server's event loop."""

    @asynccontextmanager
    async def lifespan(web: Starlette):  # type: ignore[no-untyped-def]
        assistant = create_assistant(settings, trace)
        web.state.assistant = assistant
        web.state.handler = AsyncSlackRequestHandler(assistant.app)
        try:
            yield
        finally:
            await assistant.close()

    async def slack_events(request: Request) -> Response:
        # When it arrived: its files and links are read until a deadline counted from here.
        arrival = {"received_at": asyncio.get_running_loop().time()}
        return await request.app.state.handler.handle(request, arrival)

    async def healthz(request: Request) -> Response:
        return JSONResponse(
            {"ok": True, "active_threads": request.app.state.assistant.scheduler.active}
        )

    return Starlette(
        routes=[
            Route("/slack/events", slack_events, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
        ],
        lifespan=lifespan,
    )


def serve(settings: Settings, host: str = "0.0.0.0") -> None:
    uvicorn.run(create_web_app(settings), host=host, port=settings.port, log_level="info")
