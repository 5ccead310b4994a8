"""Answers of 200 whose body is not a usable chat completion, for `FakeOpenAI.script(...)`:
what a proxy, a gateway or a half-compatible server in front of the model may send.

`BAD_BODIES` names each kind, for tests that go through them all.
"""

from __future__ import annotations

from collections.abc import Callable

from assistant.fakes.openai.responses import Completion, Raw, Response

SIGN_IN_PAGE = (
    b"<!DOCTYPE html><html><head><title>Sign in</title></head>"
    b"<body><form action='/login'>Sign in to continue</form></body></html>"
)


def html_page() -> Raw:
    """A proxy's sign-in page, served with its own content type."""
    return Raw(SIGN_IN_PAGE, "text/html; charset=utf-8")


def not_json() -> Raw:
    """Text that is not JSON, though labelled as JSON (a body cut short, a gateway's note)."""
    return Raw(b'{"id": "chatcmpl-cut", "choices": [{"mess', "application/json")


def empty_body() -> Raw:
    return Raw(b"", "application/json")


def null_message() -> Completion:
    return Completion(None, "stop")


def null_function() -> Completion:
    """A tool call without its function."""
    call = {"id": "call_null", "type": "function", "function": None}
    return Completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")


def list_content() -> Completion:
    """Content as a list of parts, as some servers send it, where a string is expected."""
    parts = [{"type": "text", "text": "Hello"}]
    return Completion({"role": "assistant", "content": parts, "refusal": None}, "stop")


BAD_BODIES: dict[str, Callable[[], Response]] = {
    "html-page": html_page,
    "not-json": not_json,
    "null-message": null_message,
    "null-function": null_function,
    "list-content": list_content,
    "empty-body": empty_body,
}
