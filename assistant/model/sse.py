"""The Server-Sent Events of a streamed chat completion, split a read of the body at a time.

The client library's own stream decodes them one event, one line and one object at a time,
which was most of a streamed answer's CPU (bench/RESULTS.md, `python -m bench cpu`): here a
read's events are one parse (`parse`: `json.loads`, or a parser that also checks their
shape, as `assistant.model.stream.parse_chunks`), and the common form (every event one
`data:` line) is split without a loop over the events.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

# An event ends at a blank line; lines end in CRLF, LF or CR (the SSE specification).
_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r|\r\n\n|\n\r\n")
_LINE_END = re.compile(rb"\r\n|\n|\r")


class StreamError(Exception):
    """The model service sent an error in its stream (`{"error": ...}` as a chunk)."""

    def __init__(self, message: str, body: object) -> None:
        super().__init__(message)
        self.body = body


class SseData:
    """The `data` of the Server-Sent Events of a chat completion, as JSON, fed the body as it
    is read: every event complete in what came so far, at once. Comments (`: keep-alive`)
    and other fields are skipped; `data: [DONE]` ends the stream (`done`), and so does an
    error the service sends as a chunk (`error`: the chunks before it are read first)."""

    def __init__(self, parse: Callable[[bytes], list[Any]] = json.loads) -> None:
        self._parse = parse  # a JSON array of the read's values: its list
        self._rest = b""
        self.done = False
        self.error: StreamError | None = None

    def feed(self, data: bytes) -> list[Any]:
        buffer = self._rest + data
        simple = None if self.done else _one_line_events(buffer)
        if simple is not None:
            read, joined, self.done = simple
            self._rest = buffer[read:]
            values = [joined] if joined else []
        else:
            values = self._events(buffer)
        if not values:
            return []
        # One parse for the read: JSON's own array of the events' values.
        chunks = self._parse(b"[" + b",".join(values) + b"]")
        for position, chunk in enumerate(chunks):
            if isinstance(chunk, dict) and chunk.get("error"):
                error = chunk["error"]
                message = error.get("message") if isinstance(error, dict) else None
                self.error = StreamError(
                    message if isinstance(message, str) else "An error occurred during streaming",
                    error,
                )
                self.done = True
                return chunks[:position]
        return chunks

    def _events(self, buffer: bytes) -> list[bytes]:
        """The events' values, each event read line by line (any line end, comments,
        values on several lines)."""
        *events, self._rest = _EVENT_END.split(buffer)
        values: list[bytes] = []
        for event in events:
            if self.done:
                break
            lines = [line for line in _LINE_END.split(event) if line.startswith(b"data:")]
            if not lines:
                continue  # a comment (`: keep-alive`), or fields other than data
            # One space after the colon is the separator, not the value's.
            value = b"\n".join(line[6:] if line[5:6] == b" " else line[5:] for line in lines)
            if value.startswith(b"[DONE]"):
                self.done = True
            else:
                values.append(value)
        return values


def _one_line_events(buffer: bytes) -> tuple[int, bytes, bool] | None:
    """As OpenAI and vLLM send them, every event one line `data: VALUE` and a blank line,
    read without a loop over the events (a read holds hundreds; a JSON value holds no raw
    line end): (the bytes read, the values joined by commas, whether `[DONE]` came). None:
    the events take another form, to be read one by one."""
    if b"\r" in buffer or not buffer.startswith(b"data: "):
        return None
    complete = buffer.rpartition(b"\n\n")[0]
    # Every line end in the complete events is in one of their separators.
    if not complete or complete.count(b"\n") != 2 * complete.count(b"\n\ndata: "):
        return None
    values = complete[6:]
    done = values == b"[DONE]" or values.endswith(b"\n\ndata: [DONE]")
    if done:
        values = values.removesuffix(b"[DONE]").removesuffix(b"\n\ndata: ")
    if b"data: [DONE]" in values:
        return None  # events after the end
    return len(complete) + 2, values.replace(b"\n\ndata: ", b","), done
