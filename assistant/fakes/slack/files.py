"""Files for `FakeSlack`: `add_file` makes a file object as a message's `files` list carries
it, and its `url_private` serves the content to the bot token (`downloads` records which;
`hold_download` holds one)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from assistant.fakes.slack.holds import RequestHolds
from assistant.fakes.slack.params import bearer

SIGN_IN_PAGE = "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in</body></html>"


@dataclass(frozen=True)
class _File:
    content: bytes
    mimetype: str
    access: bool
    team: str | None = None  # its workspace (slack_oauth); None: the one workspace


class FileServing(RequestHolds):
    """Part of `FakeSlack`, which sets the attributes declared here."""

    bot_token: str | None
    url: str
    _token_teams: dict[str, str]  # slack_oauth's: each declared workspace's live tokens
    _cond: threading.Condition

    def _init_files(self) -> None:
        self._files: dict[str, _File] = {}
        self.downloads: list[str] = []  # file ids served, in order

    def _file_routes(self) -> list[web.RouteDef]:
        return [web.get("/files-pri/{file_id}/{name}", self._handle_file)]

    def add_file(
        self,
        name: str,
        mimetype: str,
        content: bytes,
        *,
        access: bool = True,
        filetype: str | None = None,
        team: str | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """A file as a message's `files` list carries it. Its `url_private` serves `content`
        to the bot token; without `access`, like Slack for a file the app may not read, it
        answers 200 with an HTML sign-in page, as it does to a token of another workspace
        than `team`'s (with workspaces declared)."""
        file_id = f"F{len(self._files) + 1:08d}"
        with self._cond:
            self._files[file_id] = _File(content, mimetype, access, team)
        url = f"{self.url}/files-pri/{file_id}/{name}"
        return {
            "id": file_id,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": filetype or name.rsplit(".", 1)[-1].lower(),
            "size": len(content),
            "url_private": url,
            "url_private_download": url + "?download=1",
            **fields,
        }

    async def _handle_file(self, request: web.Request) -> web.StreamResponse:
        file_id = request.match_info["file_id"]
        await self._wait_if_held(f"file:{file_id}")
        with self._cond:
            found = self._files.get(file_id)
            token = bearer(request.headers.get("Authorization"))
            allowed = token is not None and (self.bot_token is None or token == self.bot_token)
            if found is not None and found.team is not None:
                allowed = allowed and self._token_teams.get(token or "") == found.team
            if found is not None and found.access and allowed:
                self.downloads.append(file_id)
                return web.Response(body=found.content, content_type=found.mimetype)
        return web.Response(text=SIGN_IN_PAGE, content_type="text/html")
