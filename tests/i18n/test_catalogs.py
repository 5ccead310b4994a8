"""The message catalogs (assistant/i18n/messages/): the template holds every message the code
marks, and each language's catalog translates every one of them, with the same fields, in as
many plural forms as the language has, and nothing else."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.pofile import read_po

from assistant.i18n.words import LOCALES, MESSAGES, Words, catalog_path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = MESSAGES / "assistant.pot"
MessageId = str | tuple[str, ...]


def marked() -> set[MessageId]:
    """The messages the code marks now, as `pybabel extract -k N_` finds them."""
    keywords = {**DEFAULT_KEYWORDS, "N_": None}
    found = extract_from_dir(ROOT / "assistant", keywords=keywords)
    return {m if isinstance(m, str) else tuple(m) for _, _, m, _, _ in found}


def read(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as po:
        return read_po(po, locale=locale)


def fields(text: str) -> set[str]:
    """The `{name}` fields of a format string; raises ValueError when it is malformed."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def problems(catalog: Catalog, template: Catalog) -> list[str]:
    """What is wrong with a language's catalog against the template: a message missing or
    untranslated, one the template does not hold, a field missing, extra or malformed, the
    wrong number of plural forms."""
    wanted = {m.id for m in template if m.id}
    have = {m.id: m for m in catalog if m.id}
    found = [f"missing: {i!r}" for i in sorted(wanted - set(have), key=str)]
    found += [f"not in the template: {i!r}" for i in sorted(set(have) - wanted, key=str)]
    for message_id in sorted(wanted & set(have), key=str):
        message = have[message_id]
        ids = (message_id,) if isinstance(message_id, str) else message_id
        forms = (message.string,) if isinstance(message.string, str) else message.string
        if isinstance(message_id, tuple) and len(forms) != catalog.num_plurals:
            found.append(f"{len(forms)} forms, not {catalog.num_plurals}: {message_id!r}")
        try:
            expected = set().union(*(fields(i) for i in ids))
            for form in forms:
                if not form:
                    found.append(f"untranslated: {message_id!r}")
                elif fields(form) != expected and not (
                    # One form of several may leave out `{n}` ("one channel"), never more.
                    isinstance(message_id, tuple) and fields(form) == expected - {"n"}
                ):
                    found.append(f"fields {sorted(fields(form))} not {sorted(expected)}: {form!r}")
        except ValueError as exc:
            found.append(f"malformed ({exc}): {message_id!r}")
    return found


def test_the_template_holds_what_the_code_marks():
    template = {m.id for m in read(TEMPLATE) if m.id}
    assert sorted(marked() - template, key=str) == [], "run the extract command (development.md)"
    assert sorted(template - marked(), key=str) == [], "run the extract command (development.md)"


@pytest.mark.parametrize("locale", LOCALES)
def test_each_catalog_is_complete(locale):
    catalog = read(catalog_path(locale), locale)
    assert str(catalog.locale) == locale
    assert problems(catalog, read(TEMPLATE)) == []


@pytest.mark.parametrize("locale", LOCALES)
def test_each_message_fills_in_every_language(locale):
    """Every message of every catalog formats with its fields, as the app fills them."""
    words = Words(locale)
    for message in read(TEMPLATE):
        if not message.id:
            continue
        if isinstance(message.id, str):
            assert words.gettext(message.id, **dict.fromkeys(fields(message.id), "x"))
        else:
            values = dict.fromkeys(fields(message.id[0]) | fields(message.id[1]), "x")
            values.pop("n", None)
            for n in (0, 1, 2, 5, 1_000_000):
                assert words.ngettext(*message.id, n, **values)


def test_the_check_finds_a_missing_string_and_a_wrong_field():
    template = Catalog(locale="en")
    template.add("Hello {name}")
    template.add("Bye")
    template.add(("{n} file", "{n} files"))
    broken = Catalog(locale="pt_BR")
    broken.add("Hello {nome}", "Olá {nome}")  # not in the template
    broken.add("Hello {name}", "Olá {nome}")  # a field renamed
    broken.add(("{n} file", "{n} files"), ("{n} arquivo", "{n arquivos", "{n} arquivos"))
    assert problems(broken, template) == [
        "missing: 'Bye'",
        "not in the template: 'Hello {nome}'",
        "malformed (expected '}' before end of string): ('{n} file', '{n} files')",
        "fields ['nome'] not ['name']: 'Olá {nome}'",
    ]
    extra = Catalog(locale="ja")
    extra.add("Hello {name}", "こんにちは {name} {extra}")
    extra.add("Bye", "")
    extra.add(("{n} file", "{n} files"), ("{n} 件",))
    assert problems(extra, template) == [
        "untranslated: 'Bye'",
        "fields ['extra', 'name'] not ['name']: 'こんにちは {name} {extra}'",
    ]
