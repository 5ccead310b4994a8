"""The live console trace (docs/log-format.md#console-trace): every entry as it is recorded,
in the form `ASSISTANT_TRACE` asks for.

- `TraceWriter` (`text`, the default): the emoji blocks of `context.render`. A process
  answers many threads at once, so when an entry belongs to another thread than the entry
  printed before it, one header line naming the thread comes first. A trace of one thread
  is exactly `render_log` of its entries: no header at all.
- `JsonTrace` (`json`): one JSON object per entry per line, for log collectors: the thread,
  the entry in its canonical form and its side metadata.
- `NoTrace` (`off`): nothing; the store keeps everything anyway.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Literal, Protocol, TextIO

from context.entry import Entry
from context.render import printable, render_entry, wants_colour
from context.storage.values import EntryMeta, ThreadKey

TraceKind = Literal["text", "json", "off"]
TRACE_KINDS: tuple[TraceKind, ...] = ("text", "json", "off")

# What people call a thread, when known: a channel's name (`#general`), or what a replay
# replays. None: only its id is shown.
ThreadNames = Callable[[ThreadKey], "str | None"]

_BOLD, _RESET = "\x1b[1m", "\x1b[0m"


def _no_names(key: ThreadKey) -> str | None:
    return None


def thread_header(key: ThreadKey, name: str | None = None) -> str:
    """The header line's text: `🧵 TEAM/CHANNEL/THREAD_TS (name)`. The one place it is made,
    so that whatever the renderer does to the text it prints is done to this text too."""
    # A channel's name and a replayed file's name come from outside: escaped like entry text.
    return printable(f"🧵 {key} ({name})" if name else f"🧵 {key}")


class Trace(Protocol):
    def write(
        self, entry: Entry, key: ThreadKey | None = None, meta: EntryMeta | None = None
    ) -> None:
        """Print one entry just recorded in thread `key`, with its side metadata."""
        ...


class TraceWriter:
    """The text trace. `header_first`: a header before the very first entry too (a replay of
    several logs names each); by default a trace of one thread has none."""

    def __init__(
        self,
        stream: TextIO,
        colour: bool | None = None,
        names: ThreadNames = _no_names,
        header_first: bool = False,
    ) -> None:
        self._stream = stream
        self._colour = wants_colour(stream) if colour is None else colour
        self._names = names
        self._started = False
        self._last: ThreadKey | None = None
        self._header_first = header_first
        # Runs and events record from one event loop, but a trace must never interleave two
        # blocks, whoever calls it.
        self._lock = threading.Lock()

    def write(
        self, entry: Entry, key: ThreadKey | None = None, meta: EntryMeta | None = None
    ) -> None:
        with self._lock:
            parts = ["\n"] if self._started else []
            if key is not None and key != self._last:
                if self._last is not None or self._header_first:
                    parts.append(self._header(key) + "\n")
                self._last = key
            parts.append(render_entry(entry, self._colour) + "\n")
            self._stream.write("".join(parts))
            self._stream.flush()
            self._started = True

    def _header(self, key: ThreadKey) -> str:
        text = thread_header(key, self._names(key))
        return f"{_BOLD}{text}{_RESET}" if self._colour else text


class JsonTrace:
    """One line per entry: `{"thread", "name"?, "entry", "meta"}`; `meta` holds every side
    metadata field (null when not known) but the secret ones (`EntryMeta.shown`)."""

    def __init__(self, stream: TextIO, names: ThreadNames = _no_names) -> None:
        self._stream = stream
        self._names = names
        self._lock = threading.Lock()

    def write(
        self, entry: Entry, key: ThreadKey | None = None, meta: EntryMeta | None = None
    ) -> None:
        line: dict[str, object] = {"thread": str(key) if key is not None else None}
        name = self._names(key) if key is not None else None
        if name:
            line["name"] = name
        line["entry"] = entry.as_dict()
        line["meta"] = (meta or EntryMeta()).shown()
        # ensure_ascii=False keeps text readable; json escapes control characters and line
        # breaks, so one entry is always one line.
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            self._stream.write(text + "\n")
            self._stream.flush()


class NoTrace:
    def write(
        self, entry: Entry, key: ThreadKey | None = None, meta: EntryMeta | None = None
    ) -> None:
        pass


def open_trace(
    kind: TraceKind, stream: TextIO, names: ThreadNames = _no_names, header_first: bool = False
) -> Trace:
    """The trace `ASSISTANT_TRACE` names, writing to `stream`."""
    if kind == "json":
        return JsonTrace(stream, names)
    if kind == "off":
        return NoTrace()
    return TraceWriter(stream, names=names, header_first=header_first)
