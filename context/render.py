"""The console trace (docs/log-format.md#console-trace): one renderer for live traces and saved
logs.

Entry text comes from people, files, Slack and the model, and the console is a terminal: an
escape sequence in a message could clear the screen, retitle the window, hide a link (OSC 8)
or rewrite a line (CR), and a bidi override could make text read backwards. So every piece of
entry text passes through `printable` (in `_paint`, the one place text is put on the console)
before the renderer adds its own colour codes: C0 and C1 controls other than newline and tab,
DEL, and the bidi embedding, override, isolate and mark characters are shown as `\\u001b`
style escapes. Only the console is changed; the log keeps the exact text.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import TextIO

from context.entry import BUDGET_PREFIX, AssistantEntry, Entry, SystemEntry, UserEntry
from context.memory import MEMORY_HEADING, is_memory_entry
from context.toolcalls import PostMessage

_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"

# C0 but tab and newline; DEL and C1; the bidi marks (ALM, LRM, RLM), embeddings and
# overrides (LRE..RLO) and isolates (LRI..PDI).
UNPRINTABLE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)

Span = tuple[str, str]  # (the renderer's style code or "", text)


def printable(text: str) -> str:
    """`text` with terminal controls and bidi controls written as visible `\\uXXXX` escapes."""
    return UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _paint(spans: Iterable[Span], colour: bool) -> str:
    """The one way out to the console: each span's text made printable, then styled."""
    return "".join(
        f"{style}{printable(text)}{_RESET}" if colour and style else printable(text)
        for style, text in spans
    )


def _indent_after_first(text: str) -> str:
    return text.replace("\n", "\n   ")


def render_entry(entry: Entry, colour: bool = False) -> str:
    """One entry as its trace block, without a trailing newline."""
    return _paint(_spans(entry), colour)


def _spans(entry: Entry) -> list[Span]:
    if isinstance(entry, SystemEntry):
        if entry.content.startswith(BUDGET_PREFIX):  # a run a spend limit stopped
            text = entry.content.removeprefix(BUDGET_PREFIX)
            return [(_BOLD, "💰 Budget:"), ("", f" {_indent_after_first(text)}")]
        if is_memory_entry(entry.content):  # its heading is the format's, not worth a line
            shown = entry.content.removeprefix(MEMORY_HEADING).lstrip("\n")
            text = _indent_after_first(shown) if shown else ""
            return [(_BOLD, "🧠 Channel memory:"), ("", f"\n   {text}" if text else "")]
        return [(_BOLD, "🧠 System:"), ("", f" {_indent_after_first(entry.content)}")]
    if isinstance(entry, UserEntry):
        quoted = "\n".join("> " + line for line in entry.content.text.split("\n"))
        return [
            (_BOLD, f"👤 User {entry.content.userid} [Turn {entry.turn}]"),
            ("", "\n"),
            (_DIM, f"🕐 {entry.timestamp}"),
            ("", f"\n{quoted}"),
        ]
    assert isinstance(entry, AssistantEntry)
    call = entry.content
    spans: list[Span] = [
        (_BOLD, f"🤖 Assistant [Turn {entry.turn}]"),
        ("", "\n"),
        (_DIM, f"🕐 {entry.timestamp}"),
        ("", "\n"),
    ]
    if isinstance(call, PostMessage):
        spans.append(("", f'💬 postMessage:\n   "{_indent_after_first(call.text)}"'))
    elif call.toolCall == "finishRequest":
        spans.append(("", "✅ finishRequest"))
    else:
        params = {
            k: v
            for k, v in call.model_dump(mode="json", exclude_none=True).items()
            if k not in ("toolCall", "reasoning")
        }
        shown = ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in params.items())
        spans.append(("", f"🔧 {call.toolCall} ({shown})" if shown else f"🔧 {call.toolCall}"))
    if call.reasoning:
        spans += [("", "\n"), (_DIM, f"   └─ Reason: {_indent_after_first(call.reasoning)}")]
    return spans


def render_log(entries: Iterable[Entry], colour: bool = False) -> str:
    """A saved log as the trace: blocks separated by a blank line, final newline."""
    blocks = [render_entry(entry, colour) for entry in entries]
    return "\n\n".join(blocks) + "\n" if blocks else ""


def wants_colour(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")
