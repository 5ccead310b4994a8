"""The bot's words in one language: gettext message catalogs, one `.po` file a language
(`messages/<locale>/LC_MESSAGES/assistant.po`), read with Babel when a language is first
asked for and kept for the process.

The `.po` files ship as they are, not compiled: `pip install -e .` runs no build step, and a
compiled `.mo` beside its `.po` could drift from it. Messages are Python format strings with
named fields (`{name}`), filled after translation. English is the source language: its
catalog may reword a message shown in Slack, but what the log records is always the source
text (`english`), so the log reads the same whatever language people were shown."""

from __future__ import annotations

import gettext
import io
import threading
from dataclasses import dataclass, field
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

DOMAIN = "assistant"
MESSAGES = Path(__file__).parent / "messages"
SOURCE = "en"
# The languages with a catalog, each complete (tests/i18n/test_catalogs.py).
LOCALES = ("en", "pt_BR", "es", "ja")

_loaded: dict[str, gettext.GNUTranslations] = {}
_lock = threading.Lock()


def catalog_path(locale: str) -> Path:
    return MESSAGES / locale / "LC_MESSAGES" / f"{DOMAIN}.po"


def _translations(locale: str) -> gettext.GNUTranslations:
    """The locale's catalog, compiled in memory once (Babel reads the `.po`, gettext the
    compiled bytes: gettext's own plural rules and lookups)."""
    with _lock:
        found = _loaded.get(locale)
        if found is None:
            with catalog_path(locale).open("rb") as po:
                catalog = read_po(po, locale=locale, domain=DOMAIN)
            compiled = io.BytesIO()
            write_mo(compiled, catalog)
            compiled.seek(0)
            found = _loaded[locale] = gettext.GNUTranslations(compiled)
        return found


def N_(message: str) -> str:  # gettext's own name for it
    """Marks a message for extraction where it is defined; translated where it is shown."""
    return message


def english(message: str, **fields: object) -> str:
    """The message as the log records it: the source text, its fields filled."""
    return message.format(**fields) if fields else message


@dataclass(frozen=True)
class Words:
    """The bot's words in `locale` (one of `LOCALES`). `gettext` and `ngettext` are the
    names `pybabel extract` looks for: every message shown goes through one of them (or is
    marked with `N_` where it is defined)."""

    locale: str = SOURCE

    def gettext(self, message: str, **fields: object) -> str:
        text = _translations(self.locale).gettext(message)
        return text.format(**fields) if fields else text

    def ngettext(self, singular: str, plural: str, n: int, **fields: object) -> str:
        """The form for `n` (filled in as `{n}`, with the other fields)."""
        text = _translations(self.locale).ngettext(singular, plural, n)
        return text.format(n=n, **fields)


ENGLISH = Words(SOURCE)


@dataclass(frozen=True)
class Message:
    """A message decided before the language it is shown in: the source text (marked with
    `N_` where it is written) and its fields."""

    text: str
    fields: dict[str, object] = field(default_factory=dict)

    def english(self) -> str:
        """As the log records it."""
        return english(self.text, **self.fields)

    def shown(self, words: Words) -> str:
        """As Slack shows it to people reading `words`' language."""
        return words.gettext(self.text, **self.fields)


def language_name(locale: str) -> str:
    """The language's own name for itself ("Português (Brasil)", "日本語"), as Slack's
    language menu shows them."""
    try:
        name = Locale.parse(locale).get_display_name(locale) or locale
    except (ValueError, UnknownLocaleError):
        return locale
    return name[:1].upper() + name[1:]
