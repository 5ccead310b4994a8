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

from dataclasses import dataclass

from assistant.slack_text import (
    MAX_MESSAGE_CHARS,
    certain_start,
    neutralize_mentions,
    settled_split,
)

_BROADCAST_NAMES = ("channel", "here", "everyone", "group")


def settled_end(text: str) -> int:
    """How much of `text`, the beginning of a model's text, `neutralize_mentions` treats the
    same whatever follows it."""
    end = len(text)
    # Only the last `<` can be open: an earlier one is followed by this `<`, so no token.
    last = text.rfind("<")
    if last >= 0 and ">" not in text[last:] and text[last + 1 : last + 2] in ("", "!", "@"):
        end = last
    # Only after the last `@` can the text still be the start of a broadcast word.
    at = text.rfind("@")
    if at >= 0:
        tail = text[at + 1 :].lower()
        if any(name.startswith(tail) for name in _BROADCAST_NAMES):
            end = min(end, at)
    return end


@dataclass(frozen=True)
class Shown:
    """The Slack messages a text being written will become, as far as they are sure."""

    parts: list[str]  # each message's text as far as it is sure (the last may be "")
    settled: int  # parts[:settled] are whole: exactly the messages that will be posted


def shown_parts(
    text: str, max_people: int | None = None, limit: int = MAX_MESSAGE_CHARS
) -> Shown:
    """The messages of `text` (so far) that may be shown: `split_message` of
    `neutralize_mentions(text)` starts with `parts[:settled]`, and its next message starts
    with `parts[settled]`, however `text` goes on."""
    sure = neutralize_mentions(text[: settled_end(text)], max_people)
    heads, rest = settled_split(sure, limit)
    # Blank messages are dropped from a split (see `split_message`).
    heads = [head for head in heads if head.strip()]
    return Shown([*heads, certain_start(rest, limit)], len(heads))
