"""Text crossing the Slack boundary: what gets recorded from a message
(docs/log-format.md#peoples-messages) and what gets posted from the model
(docs/log-format.md#tool-calls-and-their-results). Pure functions, no I/O."""

from __future__ import annotations

import re
import unicodedata

# Slack's markdown block takes 12,000 characters, but its own translation can grow a text
# past what a message accepts (msg_blocks_too_long near 13,000); 10,000 leaves room.
MAX_MESSAGE_CHARS = 10_000

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Slack's tokens that notify people: `<!here>`, `<!channel>`, `<!everyone>` (and the legacy
# `<!group>`), user groups `<!subteam^S123|@team>`, and people `<@U123>` / `<@W123|name>`. A
# token runs from `<` to the first `>`; `<!date^…>` and anything else only formats text.
_TOKEN = re.compile(r"<([!@])([^<>]*)>")
_COMMAND = re.compile(r"\s*([A-Za-z]*)\^?([^|]*)")
_PERSON = re.compile(r"\s*([UW][A-Z0-9]+)", re.IGNORECASE)
_BROADCASTS = frozenset({"channel", "here", "everyone", "group"})
# A `<!` or `<@` that does not close as a token: Slack's reading of it is not ours to guess.
_STRAY = re.compile(r"<(?=[!@])(?![!@][^<>]*>)")
# Slack pings on a broadcast word next to punctuation, `_` included (`_@here_` is italics), so
# only a letter or digit on either side (an e-mail address, `@heresy`) leaves it a plain word.
_BROADCAST_WORD = re.compile(r"(?<![^\W_])@(channel|here|everyone|group)(?![^\W_])", re.IGNORECASE)
# Characters that show nothing: besides whitespace and format characters (Cf: zero-width
# space, joiners, word joiner, BOM, direction marks), fillers that render as blank glyphs.
_BLANK_GLYPHS = frozenset("\u034f\u115f\u1160\u2800\u3164\uffa0")
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"})
_WORD_JOINER = "\u2060"


def clean_user_text(text: str, bot_user_id: str | None) -> str:
    """A Slack message's text as recorded: the bot's leading mention removed, Slack's three
    HTML escapes undone, control characters other than newline and tab removed."""
    if bot_user_id:
        text = re.sub(rf"^\s*<@{re.escape(bot_user_id)}(\|[^>]*)?>[\s:,]*", "", text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return _CONTROL.sub("", text)


def neutralize_mentions(text: str, max_people: int | None = None) -> str:
    """Model text as it may be posted: nobody but at most `max_people` people (None: any
    number) can be notified by it.

    Broadcasts (`<!here>`, `@channel`, `_@everyone_`, …) and user groups (`<!subteam^…>`)
    become words that cannot ping (a word joiner after the @); mentions of people beyond the
    first `max_people` distinct ones become their names the same way (`@name`, or `@U123`).
    A `<!` or `<@` that does not close as a token gets a word joiner after its `<`."""
    people: dict[str, int] = {}  # each person notified, by order of first mention

    def plain(match: re.Match[str]) -> str:
        kind, body = match.group(1), match.group(2)
        target, _, label = body.partition("|")
        if kind == "!":
            command = _COMMAND.match(target)
            assert command is not None  # every part of the pattern is optional
            name, argument = command.group(1).lower(), command.group(2).strip()
            if name in _BROADCASTS:
                return f"@{_WORD_JOINER}{name}"
            if name == "subteam":
                return f"@{_WORD_JOINER}{label.strip().lstrip('@') or argument or 'group'}"
            return match.group(0)  # a date, or not Slack's at all (`<!DOCTYPE html>`)
        # `<@U123 x>` counts as a person too: what Slack makes of it is not ours to guess.
        person = _PERSON.match(target)
        if person is None:
            return match.group(0)  # not a person (`<@Override>` in code)
        order = people.setdefault(person.group(1).upper(), len(people))
        if max_people is None or order < max_people:
            return match.group(0)
        return f"@{_WORD_JOINER}{label.strip().lstrip('@') or target.strip()}"

    # Unclosed first: a token made plain takes its `<` away, which must not close another.
    text = _STRAY.sub("<" + _WORD_JOINER, text)
    text = _STRAY.sub("<" + _WORD_JOINER, _TOKEN.sub(plain, text))
    return _BROADCAST_WORD.sub(lambda m: "@" + _WORD_JOINER + m.group(1), text)


def is_invisible(text: str) -> bool:
    """Whether a text would show nothing in Slack: only whitespace, zero-width and other
    format characters, or blank fillers."""
    return all(
        c in _BLANK_GLYPHS
        or unicodedata.category(c) in _INVISIBLE_CATEGORIES
        or "\ufe00" <= c <= "\ufe0f"  # variation selectors
        or "\U000e0100" <= c <= "\U000e01ef"
        for c in text
    )


def split_message(text: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """Cut a long reply into messages of at most `limit` characters, in order: at paragraph
    breaks where possible, else at line breaks, else hard; a code fence cut in two is closed
    and reopened so both halves render as code."""
    chunks, rest = settled_split(text, limit)
    if rest or not chunks:
        chunks.append(rest)
    if len(chunks) == 1:
        return chunks
    # A long run of blank space would otherwise become a message of its own.
    return [c for c in chunks if c.strip()] or [""]


def settled_split(text: str, limit: int = MAX_MESSAGE_CHARS) -> tuple[list[str], str]:
    """The messages `split_message` cuts from the front of `text`, and the rest after them.
    Each cut depends only on the text before it, so the messages cut from a text's beginning
    are those of the whole text, and its rest is the beginning of the whole text's rest."""
    chunks: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = _cut_point(rest, limit)
        head, rest = rest[:cut].rstrip("\n"), rest[cut:].lstrip("\n")
        if head.count("```") % 2 == 1:
            head, rest = head + "\n```", "```\n" + rest
        chunks.append(head)
    return chunks, rest


def certain_start(rest: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """What the next message is sure to start with, when `rest` (a `settled_split` rest, at
    most `limit` long) is only the beginning of the text still to come: however the text goes
    on, the message `split_message` makes of it begins with this."""
    if len(rest) >= limit - 3:
        sure = _cut_point(rest, limit)  # the window and the character at the cut are known
    else:
        sure = len(rest.rstrip("`"))  # a hard cut there would back off over backticks
        for separator in ("\n\n", "\n", " "):
            at = rest.rfind(separator)
            if at > limit // 2:
                # Text still to come can only move the cut later (its separators come later).
                sure = at + len(separator)
                break
    return rest[:sure].rstrip("\n")


def _cut_point(text: str, limit: int) -> int:
    # Keep room to close a code fence (4 characters) inside the limit.
    window = text[: limit - 4]
    for separator in ("\n\n", "\n", " "):
        at = window.rfind(separator)
        if at > limit // 2:
            return at + len(separator)
    cut = len(window)
    # A hard cut inside a ``` marker would leave neither half a fence.
    while cut > 1 and text[cut - 1] == "`" and text[cut] == "`":
        cut -= 1
    return cut


def markdown_blocks(text: str) -> list[dict[str, str]]:
    """Slack renders standard Markdown itself in a `markdown` block."""
    return [{"type": "markdown", "text": text}]
