"""The console trace (SPEC §5): one renderer for live traces and saved logs."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import TextIO

from context.entry import AssistantEntry, Entry, SystemEntry, UserEntry

_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def _indent_after_first(text: str) -> str:
    return text.replace("\n", "\n   ")


def render_entry(entry: Entry, colour: bool = False) -> str:
    """One entry as its trace block, without a trailing newline."""
    bold, dim, reset = (_BOLD, _DIM, _RESET) if colour else ("", "", "")
    if isinstance(entry, SystemEntry):
        return f"{bold}🧠 System:{reset} {_indent_after_first(entry.content)}"
    if isinstance(entry, UserEntry):
        quoted = "\n".join("> " + line for line in entry.content.text.split("\n"))
        return (
            f"{bold}👤 User {entry.content.userid} [Turn {entry.turn}]{reset}\n"
            f"{dim}🕐 {entry.timestamp}{reset}\n{quoted}"
        )
    assert isinstance(entry, AssistantEntry)
    call = entry.content
    lines = [f"{bold}🤖 Assistant [Turn {entry.turn}]{reset}", f"{dim}🕐 {entry.timestamp}{reset}"]
    if call.toolCall == "postMessage":
        lines += ["💬 postMessage:", f'   "{_indent_after_first(call.text)}"']
    elif call.toolCall == "finishRequest":
        lines.append("✅ finishRequest")
    else:
        params = {
            k: v
            for k, v in call.model_dump(mode="json", exclude_none=True).items()
            if k not in ("toolCall", "reasoning")
        }
        shown = ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in params.items())
        lines.append(f"🔧 {call.toolCall} ({shown})" if shown else f"🔧 {call.toolCall}")
    if call.reasoning:
        lines.append(f"{dim}   └─ Reason: {_indent_after_first(call.reasoning)}{reset}")
    return "\n".join(lines)


def render_log(entries: Iterable[Entry], colour: bool = False) -> str:
    """A saved log as the trace: blocks separated by a blank line, final newline."""
    blocks = [render_entry(entry, colour) for entry in entries]
    return "\n\n".join(blocks) + "\n" if blocks else ""


def wants_colour(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")

