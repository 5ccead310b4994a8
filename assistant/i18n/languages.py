"""Which language a person is shown (docs/configuration.md, "Languages"): a channel's setting
fixes one; else the person's Slack locale (`users.info`'s `locale`, "pt-BR"), if there is a
catalog of it or of its language; else the workspace default's setting; else the deployment's
ASSISTANT_LOCALE; else English."""

from __future__ import annotations

import re

from assistant.i18n.words import LOCALES, SOURCE, Words

# A BCP 47 tag as Slack gives it ("en-US", "pt-BR", "es-LA", "zh-TW") or a gettext name
# ("pt_BR"): anything else is no locale.
_TAG = re.compile(r"^([A-Za-z]{2,3})(?:[-_]([A-Za-z0-9]{2,8}))?$")


def supported(tag: object) -> str | None:
    """The catalog for a locale tag: the same language and region ("pt-BR" → "pt_BR"), else
    the language's catalog ("es-ES", "es-LA" → "es"; "ja-JP" → "ja"), else the one catalog of
    that language whatever its region ("pt-PT" → "pt_BR"); None when no catalog is of its
    language, or it is no tag."""
    if not isinstance(tag, str):
        return None
    found = _TAG.match(tag.strip())
    if found is None:
        return None
    language, region = found.group(1).lower(), (found.group(2) or "").upper()
    if region and f"{language}_{region}" in LOCALES:
        return f"{language}_{region}"
    if language in LOCALES:
        return language
    same = [locale for locale in LOCALES if locale.split("_")[0] == language]
    return same[0] if len(same) == 1 else None


def catalog_named(name: str) -> str | None:
    """The catalog a name spells, in either form and any case (`pt-BR`, `pt_br` → `pt_BR`;
    `ES` → `es`): a setting names a catalog, never a language to match one to (None)."""
    found = _TAG.match(name.strip())
    if found is None:
        return None
    language, region = found.group(1).lower(), found.group(2)
    spelled = f"{language}_{region.upper()}" if region else language
    return spelled if spelled in LOCALES else None


def chosen(*tags: object) -> str:
    """The first of `tags` that has a catalog (a channel's, the person's, the workspace
    default's, the deployment's, in that order), else English."""
    return next((found for tag in tags if (found := supported(tag)) is not None), SOURCE)


def words_for(*tags: object) -> Words:
    return Words(chosen(*tags))
