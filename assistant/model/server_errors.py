"""What a model server's error answer says (docs/configuration.md, "Pointing at an
OpenAI-compatible server"), read from the bodies those servers send: OpenAI's `{"error":
{"message", "type", "code", "param"}}`, llama.cpp's `{"error": {"code": 400, "message", "type",
"n_prompt_tokens", "n_ctx"}}`, vLLM's (`{"object": "error", "message", "type", "code"}`, or
under `"error"`) and Ollama's `{"error": {"message", "type"}}`; the openai client hands over the
object under `"error"` when there is one. A server's text is someone else's input: it is shown
cut to a line, with secrets and URLs taken out, and only these few refusals change how calls
are made.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from http import HTTPStatus

import openai

from context.redaction import SECRET
from context.render import UNPRINTABLE
from context.urls import shown_url

SHOWN_CHARS = 300  # of the server's message, in the log and on the console

_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+", re.IGNORECASE)
_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")  # a terminal's colours and moves
_SPACES = re.compile(r"\s+")
# llama.cpp: "request (15874 tokens) exceeds the available context size (8192 tokens)";
# vLLM: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens
# (5000 in the messages, 4000 in the completion)"; OpenAI: "This model's maximum context length
# is 128000 tokens. However, your messages resulted in 130000 tokens".
_WINDOW = re.compile(
    r"available context size \((\d+) tokens?\)|maximum context length is (\d+) tokens?", re.I
)
_PROMPT = re.compile(
    r"request \((\d+) tokens?\)|(\d+) (?:tokens )?in the messages|messages resulted in (\d+)", re.I
)
_CONTEXT_TYPES = frozenset({"exceed_context_size_error", "context_length_exceeded"})
# llama.cpp: 500 "image input is not supported - hint: …"; OpenAI: 400 "Invalid content type.
# image_url is only supported by certain models."; others saying the model takes no images. Not
# a refusal of one image (OpenAI's "Invalid image", "unsupported image"): that one is retried.
_IMAGES = re.compile(
    r"image input is not supported|image_url is only supported|not a multimodal model"
    r"|does not support (?:image|vision|multimodal)|(?:image|vision|multimodal) input (?:is )?not"
    r" supported",
    re.I,
)
_STREAMING = re.compile(r"\bstream|\btool", re.I)
_STREAM = re.compile(r"\bstream", re.I)
_STREAMING_PARAMS = frozenset({"stream", "stream_options", "tools", "tool_choice"})
_HTML = re.compile(r"\s*(?:<!doctype\s+html|<html\b|<head\b|<body\b|<title\b)", re.I)
_TITLE = re.compile(r"<title[^>]*>([^<]*)</title", re.I)
PAGE_CHARS = 65_536  # of a page, looked through for its title


@dataclass(frozen=True)
class ServerSaid:
    """The server's error, as shown: its message (cut, cleaned), type and code."""

    message: str
    type: str | None = None
    code: str | None = None

    def __str__(self) -> str:
        labels = ", ".join(dict.fromkeys(filter(None, [self.type, self.code])))
        return f"{self.message} ({labels})" if labels else self.message


def server_said(error: openai.APIStatusError) -> ServerSaid | None:
    """What the server's error answer says, or None when it says nothing readable. An HTML
    page (a proxy's, a web server's without the endpoint) is named by its status and title:
    its markup on one line says nothing."""
    body = error.body
    if isinstance(body, str) and _HTML.match(body):
        return ServerSaid(_page(error.status_code, body))
    if isinstance(body, dict):
        message = body.get("message") or body.get("detail") or ""
        kind, code = body.get("type"), body.get("code")
    else:
        message, kind, code = body if isinstance(body, str) else "", None, None
    message = shown_text(str(message) if isinstance(message, str | int | float) else "")
    kind = shown_text(kind, 60) if isinstance(kind, str) else None
    code = shown_text(str(code), 60) if isinstance(code, str | int) else None
    if not message and not kind and not code:
        return None
    return ServerSaid(message or "(no message)", kind or None, code or None)


def shown_text(text: str, limit: int = SHOWN_CHARS) -> str:
    """A server's text fit for a log line: one line without terminal or bidi controls (the
    trace's own `UNPRINTABLE`), no secret, URLs as `scheme://host:port`, at most `limit`
    characters."""
    text = _SPACES.sub(" ", UNPRINTABLE.sub("", _ESCAPE.sub("", text)))
    text = SECRET.sub("[secret]", text)
    text = _URL.sub(lambda match: shown_url(match.group()), text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _page(status: int, body: str) -> str:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    title = _TITLE.search(body[:PAGE_CHARS])
    named = shown_text(html.unescape(title[1]), 120) if title else ""
    page = f'an HTML page titled "{named}"' if named else "an HTML page"
    return f"{phrase}, {page}" if phrase else page


@dataclass(frozen=True)
class WindowExceeded:
    """A context-size refusal: the server's window, and the tokens it counted in the prompt
    (None when it did not say)."""

    window: int
    prompt_tokens: int | None


def window_exceeded(error: openai.APIStatusError) -> WindowExceeded | None:
    """The window a context-size refusal names, or None if `error` is not one (or names none)."""
    if error.status_code not in (400, 413, 422):
        return None
    body = error.body if isinstance(error.body, dict) else {}
    message = str(body.get("message") or error.body or "")
    window = _number(body.get("n_ctx")) or _first_number(_WINDOW, message)
    context = error.type in _CONTEXT_TYPES or error.code in _CONTEXT_TYPES
    if window is None or not (context or _WINDOW.search(message)):
        return None
    prompt = _number(body.get("n_prompt_tokens")) or _first_number(_PROMPT, message)
    return WindowExceeded(window, prompt)


def refuses_images(error: openai.APIStatusError) -> bool:
    """Whether the server refused the request's images (a text-only model)."""
    if error.status_code not in (400, 415, 422, 500, 501):
        return False
    said = server_said(error)
    return said is not None and bool(_IMAGES.search(said.message))


def refuses_streaming(error: openai.APIStatusError) -> bool:
    """Whether a refusal of a streamed request is about streaming or tools (then the server is
    asked for whole answers), not about anything else in the request: a 400 or 422 naming
    either, or a server error naming streaming (llama.cpp before its tool-call streaming
    answered HTTP 500 "Cannot use tools with stream")."""
    said = server_said(error)
    message = said.message if said is not None else ""
    if error.status_code >= 500:
        return bool(_STREAM.search(message))
    if error.status_code not in (400, 422):
        return False
    return error.param in _STREAMING_PARAMS or bool(_STREAMING.search(message))


def _number(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _first_number(pattern: re.Pattern[str], text: str) -> int | None:
    match = pattern.search(text)
    if match is None:
        return None
    return int(next(group for group in match.groups() if group is not None))
