"""Files attached to Slack messages: what the log says of them, and their bytes.

The log keeps its exact format: a user entry's text carries a marker per file
(`[Image: shot.png]`, `[Audio Message] transcript: …`, `[File: report.pdf (application/pdf,
120 KB)]`). Images are kept beside the entry as Slack file references and fetched again when a
prompt shows them, as `image_url` parts after the log text; only the newest few, within byte
caps. Audio is transcribed once, when the message is recorded.

Slack serves a file's `url_private` only with the bot token and the `files:read` scope;
without access it answers 200 with an HTML sign-in page, which must never reach the model.

File names, mimetypes and transcripts are chosen by whoever uploads or speaks: terminal and
bidi controls are removed from them before they are recorded, and names are bounded.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

import aiohttp

from assistant.reading import until
from context.render import UNPRINTABLE
from context.storage import ImageRef, Store, ThreadKey

log = logging.getLogger(__name__)

Kind = Literal["image", "audio", "other"]
ImagePart = dict[str, Any]  # {"type": "image_url", "image_url": {"url": "data:…"}}
Transcribe = Callable[[str, bytes, str], Awaitable[str]]

# What the model services accept as images, by their first bytes (never trust the mimetype).
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
AUDIO_FILETYPES = frozenset({"m4a", "mp3", "mp4", "mpga", "mpeg", "ogg", "oga", "wav", "webm"})
MAX_AUDIO_BYTES = 25 * 1024 * 1024  # the transcription endpoint's own limit
DOWNLOAD_TIMEOUT_S = 30.0
MAX_NAME_CHARS = 200
TOO_LONG = "it took too long"  # why a file was not read before the event's acknowledgement


class DownloadError(Exception):
    """A file could not be fetched or is not what it claims; the message says why."""


def kind_of(file: dict[str, Any]) -> Kind:
    mimetype = str(file.get("mimetype", ""))
    if mimetype.startswith("image/"):
        return "image"
    if (
        mimetype.startswith("audio/")
        or file.get("subtype") == "slack_audio"
        or file.get("media_display_type") == "audio"
        or (str(file.get("filetype", "")).lower() in AUDIO_FILETYPES and "video" not in mimetype)
    ):
        return "audio"
    return "other"


def one_line(text: str) -> str:
    """`text` as one line of plain characters: no line breaks, terminal or bidi controls."""
    return UNPRINTABLE.sub("", text.replace("\n", " ").replace("\t", " ")).strip()


def file_name(file: dict[str, Any]) -> str:
    name = one_line(str(file.get("name") or file.get("title") or file.get("id") or ""))
    if len(name) > MAX_NAME_CHARS:
        name = name[: MAX_NAME_CHARS - 1] + "…"
    return name or "file"


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def image_marker(name: str) -> str:
    return f"[Image: {name}]"


def file_marker(file: dict[str, Any]) -> str:
    mimetype = one_line(str(file.get("mimetype") or ""))[:MAX_NAME_CHARS] or "unknown type"
    return f"[File: {file_name(file)} ({mimetype}, {human_size(int(file.get('size') or 0))})]"


def image_type(data: bytes) -> str | None:
    """The image's real type, from its first bytes; None if it is not one the model takes."""
    for signature, mimetype in _SIGNATURES:
        if data.startswith(signature):
            return mimetype
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_ref(file: dict[str, Any]) -> ImageRef:
    return ImageRef(
        file_id=str(file.get("id", "")),
        name=file_name(file),
        mimetype=str(file.get("mimetype", "")),
        size=int(file.get("size") or 0),
        url=str(file.get("url_private_download") or file.get("url_private") or ""),
    )


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
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
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


@dataclass
class ImageParts:
    """The image parts of a thread's prompt: its `max_images` newest images, newest first
    until `max_prompt_bytes` of data is reached, each at most `max_image_bytes`; oldest first
    in the prompt. Bytes fetched are kept (least recently used out) up to the same total."""

    files: SlackFiles
    store: Store
    max_images: int
    max_image_bytes: int
    max_prompt_bytes: int
    _cache: OrderedDict[str, tuple[str, int]] = field(default_factory=OrderedDict)
    _cached_bytes: int = 0

    async def parts(self, key: ThreadKey) -> list[ImagePart]:
        if self.max_images == 0:
            return []
        refs = await asyncio.to_thread(self.store.recent_images, key, self.max_images)
        chosen: list[str] = []
        total = 0
        for index, ref in reversed(refs):
            found = await self._data_url(ref, index)
            if found is None:
                continue
            url, size = found
            if total + size > self.max_prompt_bytes:
                break  # older images stay markers in the text
            total += size
            chosen.append(url)
        return [{"type": "image_url", "image_url": {"url": url}} for url in reversed(chosen)]

    async def _data_url(self, ref: ImageRef, index: int) -> tuple[str, int] | None:
        """The image as a data URL, and its size in bytes."""
        if ref.file_id in self._cache:
            self._cache.move_to_end(ref.file_id)
            return self._cache[ref.file_id]
        try:
            data, mimetype = await self.files.image(ref, self.max_image_bytes)
        except DownloadError as exc:
            # It was readable when recorded (else it would not be kept): deleted since, or
            # access lost. The marker stays in the text; the prompt goes without it.
            log.warning("image %s of entry %d left out: %s", ref.name, index, exc)
            return None
        url = f"data:{mimetype};base64,{base64.b64encode(data).decode('ascii')}"
        self._cache[ref.file_id] = (url, len(data))
        self._cached_bytes += len(data)
        while self._cached_bytes > self.max_prompt_bytes and len(self._cache) > 1:
            _, (_, dropped) = self._cache.popitem(last=False)
            self._cached_bytes -= dropped
        return url, len(data)


@dataclass(frozen=True)
class Attachments:
    """What a message's files add to its entry: text markers, the images to keep, and
    problems to record as a system entry after it."""

    markers: list[str] = field(default_factory=list)
    images: list[ImageRef] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def joined(cls, parts: Iterable[Attachments]) -> Attachments:
        found = cls()
        for part in parts:
            found.markers.extend(part.markers)
            found.images.extend(part.images)
            found.problems.extend(part.problems)
        return found


async def describe_files(
    files: list[dict[str, Any]],
    slack_files: SlackFiles,
    transcribe: Transcribe,
    max_image_bytes: int,
    deadline: float,
) -> Attachments:
    """Markers for `files`, read at once: images checked (fetched once now, so that a file the
    app cannot read is said at once rather than silently missing later), audio transcribed.
    What is not read by `deadline` (the event loop's clock) is described without it."""
    readings = [_describe(file, slack_files, transcribe, max_image_bytes) for file in files]
    return Attachments.joined(await until(deadline, readings, [_too_slow(f) for f in files]))


async def check_images(
    files: list[dict[str, Any]], slack_files: SlackFiles, max_image_bytes: int, deadline: float
) -> Attachments:
    """The images the app can read among `files` (checked at once, until `deadline`), and
    why the others are not kept."""
    checks = [_check_image(file, slack_files, max_image_bytes) for file in files]
    late = [Attachments(problems=[_unreadable_image(file_name(f), TOO_LONG)]) for f in files]
    return Attachments.joined(await until(deadline, checks, late))


async def _describe(
    file: dict[str, Any], slack_files: SlackFiles, transcribe: Transcribe, max_image_bytes: int
) -> Attachments:
    kind = kind_of(file)
    if kind == "image":
        found = await _check_image(file, slack_files, max_image_bytes)
        return Attachments([image_marker(file_name(file))], found.images, found.problems)
    if kind == "audio":
        return await _transcript(file, slack_files, transcribe)
    return Attachments([file_marker(file)])


def _too_slow(file: dict[str, Any]) -> Attachments:
    """What the entry says of a file that was not read in time."""
    kind, name = kind_of(file), file_name(file)
    if kind == "image":
        return Attachments([image_marker(name)], problems=[_unreadable_image(name, TOO_LONG)])
    if kind == "audio":
        return Attachments([f"[Audio Message: {name}] (not transcribed: {TOO_LONG})"])
    return Attachments([file_marker(file)])


def _unreadable_image(name: str, why: object) -> str:
    return f"The image {name} could not be read: {why}. It is not shown to the model."


async def _check_image(
    file: dict[str, Any], slack_files: SlackFiles, max_image_bytes: int
) -> Attachments:
    """The image kept if the app can read it, else why not."""
    ref = image_ref(file)
    try:
        await slack_files.image(ref, max_image_bytes)
    except DownloadError as exc:
        return Attachments(problems=[_unreadable_image(ref.name, exc)])
    return Attachments(images=[ref])


async def _transcript(
    file: dict[str, Any], slack_files: SlackFiles, transcribe: Transcribe
) -> Attachments:
    name = file_name(file)
    try:
        data = await slack_files.download(image_ref(file).url, MAX_AUDIO_BYTES)
        text = await transcribe(name, data, str(file.get("mimetype") or "audio/mp4"))
    except DownloadError as exc:
        problem = f"The audio message {name} could not be read: {exc}."
        return Attachments([f"[Audio Message: {name}]"], problems=[problem])
    except TranscriptionError as exc:
        problem = f"The audio message {name} could not be transcribed: {exc}."
        return Attachments([f"[Audio Message: {name}]"], problems=[problem])
    return Attachments([f"[Audio Message] transcript: {UNPRINTABLE.sub('', text).strip()}"])


class TranscriptionError(Exception):
    """The transcription service failed; the message holds no secret."""
