"""The audio transcriptions endpoint of `FakeOpenAI`: records each upload and answers
`transcription_text`, as JSON or (`response_format=text`) plain text."""

from __future__ import annotations

import threading
from typing import Any

from aiohttp import web


class Transcriptions:
    """Part of `FakeOpenAI`, which sets the attributes declared here."""

    transcription_text: str
    transcriptions: list[dict[str, Any]]
    _cond: threading.Condition

    def _audio_routes(self) -> list[web.RouteDef]:
        return [web.post("/v1/audio/transcriptions", self._handle_transcription)]

    async def _handle_transcription(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        record = {
            "model": form.get("model"),
            "filename": getattr(upload, "filename", None),
            "size": len(upload.file.read()) if hasattr(upload, "file") else 0,
            "fields": {k: v for k, v in form.items() if isinstance(v, str)},
        }
        with self._cond:
            self.transcriptions.append(record)
            self._cond.notify_all()
        if form.get("response_format") == "text":
            return web.Response(text=self.transcription_text)
        return web.json_response({"text": self.transcription_text})
