"""Redaction of logs shared outside the workspace (`assistant eval --save … --redact-key`,
`assistant export … --redact-key`): secrets, e-mail addresses, phone numbers and Slack user
ids replaced by stable placeholders, the same original always by the same one. The key (each
placeholder and what it stands for) is the only way back, and is written apart from the
redacted text.

What it catches: tokens and keys by their vendors' prefixes (Slack `xox…-`, `xapp-`, Slack
webhook URLs, OpenAI and Anthropic `sk-…`, GitHub `ghp_`/`gho_`/`ghs_`/`ghu_`/`github_pat_`,
GitLab `glpat-`, AWS `AKIA…`, Google `AIza…`, Stripe `sk_live_`/`rk_live_`), e-mail addresses,
phone numbers written with a `+` country code or in three or more groups of digits (not a
date YYYY-MM-DD), and Slack user ids
(`U…`/`W…` with a digit). What it does not: names, addresses, secrets without a known prefix
(a password, a bare hex key), phone numbers written as one run of digits, ids of channels and
workspaces, and anything in an image or file the log only describes."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from context.entry import ENTRY_ADAPTER, Entry

_SECRETS = [
    r"xox[abposre]-[A-Za-z0-9-]{10,}",
    r"xapp-[A-Za-z0-9-]{10,}",
    r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+",
    r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}",
    r"(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{30,}",
    r"github_pat_[A-Za-z0-9_]{30,}",
    r"glpat-[A-Za-z0-9_-]{20,}",
    r"AKIA[0-9A-Z]{16}",
    r"AIza[0-9A-Za-z_-]{35}",
    r"(?:sk|rk)_live_[A-Za-z0-9]{20,}",
]
SECRET = re.compile("|".join(f"(?:{pattern})" for pattern in _SECRETS))
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
PHONE = re.compile(
    r"(?<![\w.+-])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,4}"
    r"|(?!\d{4}-\d\d-\d\d)\(?\d{2,4}\)?[ -]\d{2,4}(?:[ -]\d{2,4}){1,3})(?!\w|\.\d)"
)
USER_ID = re.compile(r"\b[UW](?=[A-Z0-9]*\d)[A-Z0-9]{6,}\b")
# In order: a secret may hold what looks like an e-mail or digits; an e-mail, digits.
_KINDS: list[tuple[str, re.Pattern[str]]] = [
    ("SECRET", SECRET),
    ("EMAIL", EMAIL),
    ("PHONE", PHONE),
    ("USER", USER_ID),
]


@dataclass
class Redactor:
    """One redaction: the placeholders it gave so far (`key`), stable across every text it
    redacts, so a set's logs keep who is who."""

    key: dict[str, str] = field(default_factory=dict)  # placeholder -> original
    _given: dict[str, str] = field(default_factory=dict)  # original -> placeholder
    _counts: dict[str, int] = field(default_factory=dict)
    # What it replaces: every kind, or only secrets (a saved eval run, which keeps who is
    # who as the log had it but never a key or token).
    kinds: tuple[str, ...] = ("SECRET", "EMAIL", "PHONE", "USER")

    def text(self, text: str) -> str:
        for kind, pattern in _KINDS:
            if kind in self.kinds:
                text = pattern.sub(self._placeholder(kind), text)
        return text

    def value(self, value: Any) -> Any:
        """A JSON value with every string in it redacted (object keys left alone)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {name: self.value(item) for name, item in value.items()}
        return value

    def entry(self, entry: Entry) -> Entry:
        return ENTRY_ADAPTER.validate_python(self.value(entry.as_dict()))

    def _placeholder(self, kind: str) -> Callable[[re.Match[str]], str]:
        def replace(match: re.Match[str]) -> str:
            original = match.group()
            if original in self.key:  # a placeholder already (a text redacted twice)
                return original
            given = self._given.get(original)
            if given is None:
                number = self._counts.get(kind, 0) + 1
                self._counts[kind] = number
                # A user id stays one in form, so mentions still read as mentions.
                given = f"U{number:07d}X" if kind == "USER" else f"[{kind}-{number}]"
                self._given[original] = given
                self.key[given] = original
            return given

        return replace


def restore(text: str, key: dict[str, str]) -> str:
    """A redacted text with its placeholders put back, with the key."""
    if not key:
        return text
    pattern = re.compile("|".join(re.escape(p) for p in sorted(key, key=len, reverse=True)))
    return pattern.sub(lambda match: key[match.group()], text)
