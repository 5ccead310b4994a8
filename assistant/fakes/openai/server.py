"""`FakeOpenAI`: an OpenAI-compatible Chat Completions server that answers from a script.

Tests queue responses with `script(...)` using the builders in `assistant.fakes.openai.responses`
(`tool_calls`, `text`, `error`, `rate_limited`, `hold`, `delay`; bodies that are not chat
completions are in `assistant.fakes.openai.bodies`); each request takes the next one. Every request
body is recorded before it is answered, so a test can see a held request. The endpoints are
in `assistant.fakes.openai.chat` (chat completions, request checking) and
`assistant.fakes.openai.audio` (transcriptions); `assistant.fakes.openai.servers` refuses long
prompts and images as OpenAI, llama.cpp or vLLM does (`fake.server`).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from aiohttp import web

from assistant.fakes._server import DEFAULT_TIMEOUT, BackgroundServer, in_thread
from assistant.fakes.openai.audio import Transcriptions
from assistant.fakes.openai.chat import ChatCompletions
from assistant.fakes.openai.responses import DefaultResponse, Disconnect, Error, Hold, Response
from assistant.fakes.openai.servers import ServerRefusals
from assistant.fakes.openai.stream import StreamSettings


class FakeOpenAI(ChatCompletions, Transcriptions, BackgroundServer):
    """Fake model server. Point `openai.OpenAI(base_url=fake.base_url, api_key=...)` at it."""

    def __init__(
        self,
        *,
        default: DefaultResponse | None = None,
        transcription_text: str = "",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(host, port)
        # What an unscripted request gets; None answers 500 "fake model: script exhausted".
        # A callable is called with the request body (under the fake's lock) for each one.
        self.default = default
        self.transcription_text = transcription_text
        self._script: deque[Response] = deque()
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._holds: list[Hold] = []
        self.transcriptions: list[dict[str, Any]] = []
        self._transcription_holds: deque[Hold] = deque()
        self.invalid_requests: list[str] = []  # why requests were refused as malformed
        self.streaming = StreamSettings()  # how requests with "stream": true are answered
        # The models it serves (None: any name); a request for another is refused as OpenAI
        # refuses a model that does not exist or the key may not use: HTTP 404, model_not_found.
        self.models: frozenset[str] | None = None
        # What it refuses as a real server would (a context window, images), in its shapes.
        self.server = ServerRefusals()

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def _build_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_routes(self._chat_routes())
        app.router.add_routes(self._audio_routes())
        app.router.add_routes(self.server.routes())
        return app

    async def _before_shutdown(self) -> None:
        with self._cond:
            holds = list(self._holds)
        for h in holds:  # never leave a handler waiting on a test that has finished
            h.release()

    # -- script and inspection -----------------------------------------------------------------

    def script(self, *responses: Response | list[Error] | list[Disconnect]) -> None:
        """Queue responses, answered in order, one per request."""
        with self._cond:
            for item in responses:
                self._script.extend(item if isinstance(item, list) else [item])

    @property
    def pending(self) -> int:
        """Scripted responses not yet used."""
        with self._cond:
            return len(self._script)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Parsed JSON bodies of every chat completion request, in arrival order."""
        with self._cond:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        with self._cond:
            return list(self._headers)

    def wait_for_requests(
        self, count: int, timeout: float = DEFAULT_TIMEOUT
    ) -> list[dict[str, Any]]:
        """Block until `count` requests arrived (answered or not); returns all so far."""
        return self._wait(
            lambda: list(self._requests) if len(self._requests) >= count else None,
            timeout,
            lambda: f"{len(self._requests)}/{count} requests arrived",
        )

    async def wait_for_requests_async(
        self, count: int, timeout: float = DEFAULT_TIMEOUT
    ) -> list[dict[str, Any]]:
        return await in_thread(self.wait_for_requests, count, timeout)
