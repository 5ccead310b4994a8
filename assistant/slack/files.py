"""Files fetched from Slack with the bot token, and what their first bytes say they are.

Slack serves a file's `url_private` only with the bot token and the `files:read` scope;
without access it answers 200 with an HTML sign-in page, which must never reach the model.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import aiohttp

from assistant.slack.connection import SLACK_UNREACHED
from context.storage import ImageRef

# What the model services accept as images, by their first bytes (never trust the mimetype).
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
DOWNLOAD_TIMEOUT_S = 30.0


class DownloadError(Exception):
    """A file could not be fetched or is not what it claims; the message says why."""


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def image_type(data: bytes) -> str | None:
    """The image's real type, from its first bytes; None if it is not one the model takes."""
    for signature, mimetype in _SIGNATURES:
        if data.startswith(signature):
            return mimetype
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


class SlackFiles:
    """Fetches files from Slack with the bot token, bounded in size. The token goes only to
    Slack's own hosts (https, slack.com and its subdomains) or to the configured API's host
    (a proxy, or the tests' fake): a file's URL comes from an event, and a token sent
    anywhere else would be leaked."""

    def __init__(self, token: str, api_url: str) -> None:
        self._token = token
        api = urlsplit(api_url)
        self._api_origin = (api.scheme, api.netloc)
        self._session: aiohttp.ClientSession | None = None

    def _is_slack(self, url: str) -> bool:
        parts = urlsplit(url)
        host = parts.hostname or ""
        on_slack = host == "slack.com" or host.endswith(".slack.com")
        return (parts.scheme == "https" and on_slack) or (
            (parts.scheme, parts.netloc) == self._api_origin
        )

    async def download(self, url: str, limit: int) -> bytes:
        if not url:
            raise DownloadError("Slack gave no URL for it")
        try:
            on_slack = self._is_slack(url)
        except ValueError:
            raise DownloadError("Slack gave a URL that is not one") from None
        if not on_slack:
            raise DownloadError("its URL is not on Slack, so the bot token is not sent there")
        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=DOWNLOAD_TIMEOUT_S)
            )
        headers = {"Authorization": f"Bearer {self._token}"}
        try:
            async with self._session.get(url, headers=headers) as response:
                if response.status != 200:
                    raise DownloadError(f"Slack answered HTTP {response.status}")
                if response.content_type == "text/html":
                    raise DownloadError(
                        "Slack sent a sign-in page instead of the file: the app has no access "
                        "to it (it needs the files:read scope and to be in the conversation)"
                    )
                data = await response.content.read(limit + 1)
        except (*SLACK_UNREACHED, ValueError) as exc:
            raise DownloadError(f"the download failed ({type(exc).__name__})") from None
        if len(data) > limit:
            raise DownloadError(f"it is larger than {human_size(limit)}")
        return data

    async def image(self, ref: ImageRef, limit: int) -> tuple[bytes, str]:
        """The image's bytes and real type; DownloadError when it is not an image."""
        if ref.size > limit:
            raise DownloadError(f"it is larger than {human_size(limit)}")
        data = await self.download(ref.url, limit)
        mimetype = image_type(data)
        if mimetype is None:
            raise DownloadError("the file is not a PNG, JPEG, GIF or WebP image")
        return data, mimetype

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
