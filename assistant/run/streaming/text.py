"""What of a postMessage text that the model is still writing may be shown in Slack already
(docs/architecture.md#streaming). Pure functions, no I/O.

A streamed message can only grow: what was appended stays. So only a beginning of the text
that the finished post is sure to start with is shown: the text as `neutralize_mentions` and
`split_message` will make it, whatever the model writes next. Held back meanwhile: a `<!` or
`<@` not closed yet (`<!chan` may become `<!channel>`), an `@` that may still become a
broadcast (`@her`, or `@here` before the character after it is known), and the part of a
message that a later cut may still move to the next message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.slack.text import (
    MAX_MESSAGE_CHARS,
    certain_start,
    neutralize_mentions,
    settled_split,
)

_BROADCAST_NAMES = ("channel", "here", "everyone", "group")
_TOKEN = re.compile(r"<[!@][^<>]*>")  # as `neutralize_mentions` finds Slack's tokens


def settled_end(text: str) -> int:
    """How much of `text`, the beginning of a model's text, `neutralize_mentions` treats the
    same whatever follows it."""
    end = len(text)
    while (shorter := _open_from(text[:end])) < end:
        end = shorter  # what is held back may have resolved something before it
    return end


def _open_from(text: str) -> int:
    """Where the first thing whose reading depends on what comes next starts (len: none)."""
    end = len(text)
    # Only the last `<` can be open: an earlier one is followed by this `<`, so no token.
    last = text.rfind("<")
    if last >= 0 and ">" not in text[last:] and text[last + 1 : last + 2] in ("", "!", "@"):
        end = last
    waiting = _waiting_before_token(text)
    if waiting is not None:
        end = min(end, waiting)
    # Only after the last `@` can the text still be the start of a broadcast word.
    at = text.rfind("@")
    if at >= 0:
        tail = text[at + 1 :].lower()
        if any(name.startswith(tail) for name in _BROADCAST_NAMES):
            end = min(end, at)
    return end


def _waiting_before_token(text: str) -> int | None:
    """The first `<` right before a token that may become plain text (`<<!here>` reads
    `<@here` then) with no `<` or `>` after it but in tokens (which may all become plain
    text too): whether it opens a token of its own is not known yet."""
    tokens = {m.start(): m.end() for m in _TOKEN.finditer(text)}
    bare: list[int] = []  # `<` and `>` outside tokens, in order
    at = 0
    while at < len(text):
        if at in tokens:
            at = tokens[at]
            continue
        if text[at] in "<>":
            bare.append(at)
        at += 1
    waiting = None
    for place, position in enumerate(bare):
        if text[position] == "<" and position + 1 in tokens and place == len(bare) - 1:
            waiting = position
    return waiting


@dataclass(frozen=True)
class Shown:
    """The Slack messages a text being written will become, as far as they are sure."""

    parts: list[str]  # each message's text as far as it is sure (the last may be "")
    settled: int  # parts[:settled] are whole: exactly the messages that will be posted


def shown_parts(text: str, max_people: int | None = None, limit: int = MAX_MESSAGE_CHARS) -> Shown:
    """The messages of `text` (so far) that may be shown: `split_message` of
    `neutralize_mentions(text)` starts with `parts[:settled]`, and its next message starts
    with `parts[settled]`, however `text` goes on."""
    sure = neutralize_mentions(text[: settled_end(text)], max_people)
    heads, rest = settled_split(sure, limit)
    # Blank messages are dropped from a split (see `split_message`).
    heads = [head for head in heads if head.strip()]
    return Shown([*heads, certain_start(rest, limit)], len(heads))


@dataclass
class StreamedPart:
    """A Slack message being streamed: its ts, what it shows, whether it can be finished."""

    ts: str
    shown: str
    ok: bool = True
    chunked: bool = False  # its text goes as chunks (a stream with step cards)
