"""One string member of a JSON object, decoded while the object's text is still arriving: the
`text` of a postMessage call, shown in Slack as the model writes it.

Pure and incremental: `feed` takes the next piece of the object's text (split anywhere: inside
a key, an escape, a `\\uXXXX`, between the two halves of a surrogate pair) and returns the
characters of the member's value that are now certain, exactly as `json.loads` decodes them.
What it shows is only a preview: the call is parsed whole once complete, and that parse is
what gets posted.
"""

from __future__ import annotations

import json
import re

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_PLAIN = re.compile(r'[^"\\]+')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")


class StringDecoder:
    """The contents of one JSON string literal, fed after its opening quote."""

    def __init__(self) -> None:
        self._pending = ""  # an escape not yet whole, or a high surrogate awaiting its pair
        self.closed = False  # the closing quote was read
        self.failed = False  # not a valid JSON string: nothing more is decoded

    def feed(self, text: str) -> tuple[str, str]:
        """(the characters now decoded, the text after the closing quote if it came)."""
        if self.closed or self.failed:
            return "", text
        text = self._pending + text
        self._pending = ""
        out: list[str] = []
        at = 0
        while at < len(text):
            plain = _PLAIN.match(text, at)
            if plain is not None:
                out.append(plain.group())
                at = plain.end()
                continue
            if text[at] == '"':
                self.closed = True
                return "".join(out), text[at + 1 :]
            used, char = self._escape(text, at)
            if used == 0:  # cut short: wait for the rest
                self._pending = text[at:]
                break
            if char is None:
                self.failed = True
                break
            out.append(char)
            at += used
        return "".join(out), ""

    def _escape(self, text: str, at: int) -> tuple[int, str | None]:
        """At a backslash: (characters used, the character), (0, None) when the text ends
        before the escape does, (n, None) when it is not a valid escape."""
        if at + 1 >= len(text):
            return 0, None
        kind = text[at + 1]
        if kind in _ESCAPES:
            return 2, _ESCAPES[kind]
        if kind != "u":
            return 1, None
        if len(text) < at + 6:
            return (0, None) if _could_be_hex(text[at + 2 :]) else (1, None)
        if not _HEX4.fullmatch(text, at + 2, at + 6):
            return 1, None
        unit = int(text[at + 2 : at + 6], 16)
        if not 0xD800 <= unit <= 0xDBFF:
            return 6, chr(unit)
        # A high surrogate joins the low one escaped right after it, as json.loads does;
        # anything else after it leaves it alone.
        rest = text[at + 6 : at + 12]
        if len(rest) < 6 and "\\u".startswith(rest[:2]) and _could_be_hex(rest[2:]):
            return 0, None
        if rest[:2] == "\\u" and _HEX4.fullmatch(rest, 2, 6):
            low = int(rest[2:6], 16)
            if 0xDC00 <= low <= 0xDFFF:
                return 12, chr(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
        return 6, chr(unit)


def _could_be_hex(text: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in text)


class MemberDecoder:
    """The value of the top-level member `name` of a JSON object arriving in pieces, when it
    is a string. Other members, and anything nested, are skipped."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._expect_key = False  # at depth 1, the next string is a member's name
        self._key: list[str] | None = None  # the raw name being read
        self._last_key: str | None = None
        self._after_colon = False  # at depth 1, the value of `_last_key` comes next
        self._value: StringDecoder | None = None

    @property
    def done(self) -> bool:
        """Whether the whole value has been decoded (or cannot be)."""
        return self._value is not None and (self._value.closed or self._value.failed)

    def feed(self, piece: str) -> str:
        """The value's characters this piece made certain ("" before the value, and after)."""
        if self._value is not None:
            decoded, _ = self._value.feed(piece)
            return decoded
        for at, char in enumerate(piece):
            if self._in_string:
                self._string_char(char)
                continue
            if self._depth == 1 and self._after_colon and not char.isspace():
                self._after_colon = False
                if char == '"' and self._last_key == self._name:
                    self._value = StringDecoder()
                    decoded, _ = self._value.feed(piece[at + 1 :])
                    return decoded
            self._structure_char(char)
        return ""

    def _string_char(self, char: str) -> None:
        if self._escaped:
            self._escaped = False
        elif char == "\\":
            self._escaped = True
        elif char == '"':
            self._in_string = False
            if self._key is not None:
                self._last_key = _name_of(self._key)
                self._key = None
            return
        if self._key is not None:
            self._key.append(char)

    def _structure_char(self, char: str) -> None:
        if char == '"':
            self._in_string = True
            if self._depth == 1 and self._expect_key:
                self._expect_key = False
                self._key = []
        elif char in "{[":
            self._depth += 1
            self._expect_key = self._depth == 1
        elif char in "}]":
            self._depth -= 1
        elif self._depth == 1 and char == ",":
            self._expect_key = True
        elif self._depth == 1 and char == ":":
            self._after_colon = True


def _name_of(raw: list[str]) -> str | None:
    try:
        name = json.loads('"' + "".join(raw) + '"')
    except ValueError:
        return None
    return name if isinstance(name, str) else None
