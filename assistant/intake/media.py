"""Files attached to Slack messages: what the log says of them.

The log keeps its exact format: a user entry's text carries a marker per file
(`[Image: shot.png]`, `[Audio Message] transcript: …`, `[File: report.pdf (application/pdf,
120 KB)]`). Images are checked when the message is recorded and kept beside the entry as Slack
file references (`assistant/run/loop/images.py` shows them in prompts); audio is transcribed once,
when the message is recorded. The bytes come through `assistant/slack/files.py`.

File names, mimetypes and transcripts are chosen by whoever uploads or speaks: terminal and
bidi controls are removed from them before they are recorded, and names are bounded.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from assistant.intake.deadline import until
from assistant.model.client import TranscriptionError
from assistant.slack.files import DownloadError, SlackFiles, human_size
from context.render import UNPRINTABLE
from context.storage import ImageRef

Kind = Literal["image", "audio", "other"]
Transcribe = Callable[[str, bytes, str], Awaitable[str]]

AUDIO_FILETYPES = frozenset({"m4a", "mp3", "mp4", "mpga", "mpeg", "ogg", "oga", "wav", "webm"})
MAX_AUDIO_BYTES = 25 * 1024 * 1024  # the transcription endpoint's own limit
MAX_NAME_CHARS = 200
TOO_LONG = "it took too long"  # why a file was not read before the event's acknowledgement


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


def image_marker(name: str) -> str:
    return f"[Image: {name}]"


def file_marker(file: dict[str, Any]) -> str:
    mimetype = one_line(str(file.get("mimetype") or ""))[:MAX_NAME_CHARS] or "unknown type"
    return f"[File: {file_name(file)} ({mimetype}, {human_size(int(file.get('size') or 0))})]"


def image_ref(file: dict[str, Any]) -> ImageRef:
    return ImageRef(
        file_id=str(file.get("id", "")),
        name=file_name(file),
        mimetype=str(file.get("mimetype", "")),
        size=int(file.get("size") or 0),
        url=str(file.get("url_private_download") or file.get("url_private") or ""),
    )


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
