"""A person's Slack locale (`users.info` with `include_locale`: "pt-BR"), for the language the
bot's own words are shown in (`assistant.i18n.languages`). Kept a while per person, so a busy
thread asks Slack once, and a person who changes their language sees it within the hour."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from cachetools import TTLCache
from slack_sdk.web.async_client import AsyncWebClient

from assistant.slack.connection import SLACK_FAILURES, slack_reason

log = logging.getLogger(__name__)

LOCALE_SECONDS = 3600  # how long a person's locale is taken as Slack last gave it
MOST_PEOPLE = 10_000  # people whose locale is kept at once (about 1 MB at most)
# What Slack's locales look like ("en-US", "es-LA", "zh-TW"): anything else is not kept.
_LOCALE = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){0,2}$")


@dataclass
class UserLocales:
    """Shared by a process's runs and listeners: one entry per (workspace, person)."""

    _known: TTLCache[tuple[str, str], str | None] = field(
        default_factory=lambda: TTLCache(maxsize=MOST_PEOPLE, ttl=LOCALE_SECONDS)
    )

    async def of(self, client: AsyncWebClient, team: str, user: str) -> str | None:
        """The person's locale, or None when Slack does not say (no such user, a bot, an
        answer without one, Slack failing: then the next choice applies, and a failure is
        asked again next time)."""
        key = (team, user)
        if key in self._known:
            return self._known[key]
        try:
            response = await client.users_info(user=user, include_locale=True)
        except SLACK_FAILURES as exc:
            log.info("the locale of %s is not known: %s", user, slack_reason(exc))
            return None
        found = response.get("user")
        locale = found.get("locale") if isinstance(found, dict) else None
        if not (isinstance(locale, str) and _LOCALE.match(locale)):
            if locale is not None:
                log.warning("users.info gave %s a locale of no known shape: ignored", user)
            locale = None
        self._known[key] = locale
        return locale
