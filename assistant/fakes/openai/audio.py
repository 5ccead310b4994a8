"""The audio transcriptions endpoint of `FakeOpenAI`: records each upload and answers
`transcription_text`, as JSON or (`response_format=text`) plain text."""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from aiohttp import web

from assistant.fakes._server import Hold


class Transcriptions:
    """Part of `FakeOpenAI`, which sets the attributes declared here."""

    transcription_text: str
    transcriptions: list[dict[str, Any]]
    _transcription_holds: deque[Hold]
    _holds: list[Hold]
    _cond: threading.Condition

    def _audio_routes(self) -> list[web.RouteDef]:
        return [web.post("/v1/audio/transcriptions", self._handle_transcription)]

    def hold_transcription(self) -> Hold:
        """The next transcription request is recorded, then waits until `.release()`."""
        hold = Hold()
        with self._cond:
            self._transcription_holds.append(hold)
        return hold

    async def _handle_transcription(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        record = {
            "model": form.get("model"),
            "filename": getattr(upload, "filename", None),
            "size": len(upload.file.read()) if isinstance(upload, web.FileField) else 0,
            "fields": {k: v for k, v in form.items() if isinstance(v, str)},
        }
        with self._cond:
            self.transcriptions.append(record)
            hold = self._transcription_holds.popleft() if self._transcription_holds else None
            if hold is not None:
                self._holds.append(hold)
            self._cond.notify_all()
        if hold is not None:
            await hold._wait()
        if form.get("response_format") == "text":
            return web.Response(text=self.transcription_text)
        return web.json_response({"text": self.transcription_text})
