"""Which catalog a Slack locale or a setting means, and the order of the choice
(assistant/i18n/languages.py; docs/configuration.md, "Languages")."""

from __future__ import annotations

import pytest

from assistant.i18n.languages import chosen, supported
from assistant.i18n.words import ENGLISH, N_, Message, Words, language_name


@pytest.mark.parametrize(
    ("tag", "locale"),
    [
        ("pt-BR", "pt_BR"), ("pt_BR", "pt_BR"), ("PT-br", "pt_BR"),
        ("pt-PT", "pt_BR"),  # the one Portuguese catalog
        ("es-ES", "es"), ("es-LA", "es"), ("es", "es"),
        ("ja-JP", "ja"), ("en-US", "en"), ("en-GB", "en"),
        ("fr-FR", None), ("zh-TW", None),
        ("", None), ("-", None), ("pt-BR; DROP", None), ("x" * 300, None),
        (None, None), (42, None), (["pt-BR"], None),
    ],
)  # fmt: skip
def test_a_slack_locale_finds_its_catalog_or_none(tag, locale):
    assert supported(tag) == locale


def test_the_first_with_a_catalog_is_chosen_then_english():
    assert chosen("ja", "pt-BR", "es", "en") == "ja"  # a channel's setting fixes it
    assert chosen(None, "pt-BR", "es", "en") == "pt_BR"  # the person's
    assert chosen(None, "fr-FR", "es", "ja") == "es"  # the workspace default's
    assert chosen(None, "fr-FR", None, "ja") == "ja"  # the deployment's
    assert chosen(None, None, None, "de") == "en"


def test_a_message_is_logged_in_its_source_text_and_shown_translated():
    message = Message(N_("Hi, I'm {name}. How can I help?"), {"name": "Aya {x}"})
    assert message.english() == "Hi, I'm Aya {x}. How can I help?"  # a field is never parsed
    assert message.shown(Words("pt_BR")) == "Olá, eu sou Aya {x}. Como posso ajudar?"
    assert message.shown(ENGLISH) == message.english()
    assert Words("ja").gettext("a message no catalog holds") == "a message no catalog holds"


def test_the_languages_are_named_in_themselves():
    assert [language_name(x) for x in ("en", "pt_BR", "es", "ja")] == [
        "English", "Português (Brasil)", "Español", "日本語",
    ]  # fmt: skip
