"""The `chunks` of Slack's stream methods (`chat.startStream`, `appendStream`, `stopStream`),
checked with Slack's field rules; a chunk that breaks one is answered `invalid_arguments`,
as Slack answers an argument of the wrong shape.

- `markdown_text`: `text`, a string;
- `task_update`: `id` and `title`, non-empty strings, `status` one of `pending`,
  `in_progress`, `complete`, `error`; `details` and `output`, strings of at most 256
  characters; `sources`, URL source elements (`{"type": "url", "url", "text"}`);
- `plan_update`: `title`, a non-empty string;
- `blocks`: `blocks`, a list.

Limits: Slack's reference gives none for `id` and `title`; the fake holds a title (a task's
or a plan's) to 256 characters, as `details` and `output` are, and an id to 255, a block_id's
limit (a task card's `task_id` is what Slack shows it as).

`chat.startStream`'s `task_display_mode` is `timeline` (the default) or `plan`.
"""

from __future__ import annotations

from typing import Any

from assistant.fakes.slack.store import SlackError

STATUSES = frozenset({"pending", "in_progress", "complete", "error"})
DISPLAY_MODES = frozenset({"timeline", "plan"})
MAX_TITLE = 256
MAX_ID = 255
MAX_DETAILS = 256


def check_display_mode(params: dict[str, Any]) -> None:
    mode = params.get("task_display_mode")
    if mode is not None and mode not in DISPLAY_MODES:
        raise SlackError("invalid_arguments")


def chunk_text(chunks: Any) -> str:
    """The text the chunks stream into the message (their markdown_text, in order), once
    every chunk is checked."""
    if not isinstance(chunks, list) or not chunks:
        raise SlackError("invalid_arguments")
    parts: list[str] = []
    for chunk in chunks:
        if not isinstance(chunk, dict):
            raise SlackError("invalid_arguments")
        kind = chunk.get("type")
        if kind == "markdown_text":
            parts.append(_string(chunk, "text", allow_empty=True))
        elif kind == "task_update":
            _task(chunk)
        elif kind == "plan_update":
            _string(chunk, "title", limit=MAX_TITLE)
        elif kind == "blocks":
            if not isinstance(chunk.get("blocks"), list):
                raise SlackError("invalid_arguments")
        else:
            raise SlackError("invalid_arguments")
    return "".join(parts)


def _task(chunk: dict[str, Any]) -> None:
    _string(chunk, "id", limit=MAX_ID)
    _string(chunk, "title", limit=MAX_TITLE)
    if chunk.get("status") not in STATUSES:
        raise SlackError("invalid_arguments")
    for name in ("details", "output"):
        if chunk.get(name) is not None:
            _string(chunk, name, limit=MAX_DETAILS, allow_empty=True)
    sources = chunk.get("sources")
    if sources is None:
        return
    if not isinstance(sources, list):
        raise SlackError("invalid_arguments")
    for source in sources:
        if not isinstance(source, dict) or source.get("type") != "url":
            raise SlackError("invalid_arguments")
        _string(source, "url")
        _string(source, "text")


def _string(
    chunk: dict[str, Any], name: str, limit: int | None = None, allow_empty: bool = False
) -> str:
    value = chunk.get(name)
    if not isinstance(value, str) or (not value and not allow_empty):
        raise SlackError("invalid_arguments")
    if limit is not None and len(value) > limit:
        raise SlackError("invalid_arguments")
    return value
