"""Text crossing the Slack boundary: what gets recorded from a message (SPEC §2.4) and what
gets posted from the model (SPEC §4). Pure functions, no I/O."""

from __future__ import annotations

import re

# Slack's markdown block takes 12,000 characters, but its own translation can grow a text
# past what a message accepts (msg_blocks_too_long near 13,000); 10,000 leaves room.
MAX_MESSAGE_CHARS = 10_000

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BROADCAST_TOKEN = re.compile(r"<!(channel|here|everyone)(\|[^>]*)?>", re.IGNORECASE)
# Slack pings on a broadcast word next to punctuation, `_` included (`_@here_` is italics), so
# only a letter or digit on either side (an e-mail address, `@heresy`) leaves it a plain word.
_BROADCAST_WORD = re.compile(
    r"(?<![^\W_])(?<!@)@(channel|here|everyone)(?![^\W_])", re.IGNORECASE
)
_WORD_JOINER = "\u2060"


def clean_user_text(text: str, bot_user_id: str | None) -> str:
    """A Slack message's text as recorded: the bot's leading mention removed, Slack's three
    HTML escapes undone, control characters other than newline and tab removed."""
    if bot_user_id:
        text = re.sub(rf"^\s*<@{re.escape(bot_user_id)}(\|[^>]*)?>[\s:,]*", "", text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return _CONTROL.sub("", text)


def neutralize_broadcasts(text: str) -> str:
    """Make @channel, @here and @everyone in model text unable to ping anyone: Slack's
    `<!here>` tokens become words, and a word joiner after the @ keeps them words."""
    text = _BROADCAST_TOKEN.sub(lambda m: "@" + m.group(1).lower(), text)
    return _BROADCAST_WORD.sub(lambda m: "@" + _WORD_JOINER + m.group(1), text)


def split_message(text: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """Cut a long reply into messages of at most `limit` characters, in order: at paragraph
    breaks where possible, else at line breaks, else hard; a code fence cut in two is closed
    and reopened so both halves render as code."""
    chunks: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = _cut_point(rest, limit)
        head, rest = rest[:cut].rstrip("\n"), rest[cut:].lstrip("\n")
        if head.count("```") % 2 == 1:
            head, rest = head + "\n```", "```\n" + rest
        chunks.append(head)
    if rest or not chunks:
        chunks.append(rest)
    if len(chunks) == 1:
        return chunks
    # A long run of blank space would otherwise become a message of its own.
    return [c for c in chunks if c.strip()] or [""]


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
