"""The pieces a prompt text is joined from (docs/log-format.md#fitting-the-context-budget): each
entry's canonical JSON, or the same with its long text cut to a head and a marker naming
`expandEntry(index=K)`; the note object that stands for left-out entries; and, for
expandEntry, the whole text a cut hid. `PromptCache` keeps them, and their token counts, per
log. `context/budget.py` chooses which pieces a prompt shows.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from context.entry import Entry
from context.tokens import TokenCounter

NOTE = (
    "{} left out to fit the context budget; getThreadHistory brings back the thread's messages "
    "and expandEntry(index) any single entry."
)

MARKER = "\n[… {:,} more characters cut; expandEntry(index={}) returns the full text]"

_dumps = partial(json.dumps, ensure_ascii=False, separators=(",", ":"))  # as canonical_json


def omission_note(first: int, last: int) -> str:
    """The JSON object that stands for entries `first`..`last` (not a log entry)."""
    what = f"Entry {first} is" if first == last else f"Entries {first}–{last} are"  # noqa: RUF001
    return _dumps({"omitted": {"from": first, "to": last}, "note": NOTE.format(what)})


def shortened_json(entry: Entry, head_chars: int) -> str | None:
    """The entry's canonical JSON with its text (user text, system content, postMessage text)
    cut to a head and a marker; None when there is no such text or it is not long enough for a
    cut to be worth it (under half a head would save little more than the marker costs)."""
    data = entry.as_dict()
    holder, key = _text_field(data)
    text = holder[key]
    if not isinstance(text, str) or len(text) <= head_chars + head_chars // 2:
        return None
    head = text[:head_chars]
    gap = max(head.rfind(" "), head.rfind("\n"))
    if gap > head_chars * 4 // 5:  # end on a whole word when one ends near the limit
        head = head[:gap]
    holder[key] = head + MARKER.format(len(text) - len(head), entry.index)
    return _dumps(data)


def _text_field(data: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Where an entry's (as_dict) text lives: user text, postMessage text or system content."""
    content = data["content"]
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content, "text"
    return data, "content"


def full_text(entry: Entry) -> str:
    """The text `shortened_json` may cut, whole (what expandEntry gives back); for an entry
    without one, its content as JSON."""
    data = entry.as_dict()
    holder, key = _text_field(data)
    text = holder[key]
    return text if isinstance(text, str) else _dumps(text)


class PromptCache:
    """Per log (keep one per thread): each entry's canonical and shortened JSON and each piece's
    token count, computed once since old entries never change. An entry is recognised by
    identity (entries are immutable); another object at the same index is done again."""

    def __init__(self) -> None:
        self._forms: dict[int, tuple[Entry, int, str, str | None]] = {}
        self._counts: dict[TokenCounter, dict[str, int]] = {}

    def forms(self, entry: Entry, head_chars: int) -> tuple[str, str | None]:
        """The entry's canonical JSON, and its shortened JSON or None."""
        hit = self._forms.get(entry.index)
        if hit is None or hit[0] is not entry or hit[1] != head_chars:
            text = entry.canonical_json()
            # Only an entry whose JSON is longer than the cut threshold can have a long text.
            long = len(text) > head_chars + head_chars // 2
            hit = (entry, head_chars, text, shortened_json(entry, head_chars) if long else None)
            self._forms[entry.index] = hit
        return hit[2], hit[3]

    def tokens(self, counter: TokenCounter, piece: str) -> int:
        counts = self._counts.setdefault(counter, {})
        if piece not in counts:
            counts[piece] = counter.count(piece)
        return counts[piece]
