"""The language a run, a note or the App Home shows the bot's own words in
(docs/configuration.md, "Languages"): the channel's setting, else the person's Slack locale,
else the workspace default's setting, else ASSISTANT_LOCALE, else English
(`assistant.i18n.languages.chosen`). Only what Slack shows changes: the log records the
source text whatever the language (`assistant.i18n.words.english`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.languages import chosen, supported
from assistant.i18n.words import Words
from assistant.run.channels.channel_rules import ChannelRules
from assistant.slack.user_locales import UserLocales

# The system entry that tells the model a person's Slack language (docs/log-format.md,
# "People's languages"): recorded once per person and locale in a thread.
LOCALE_LINE = "<@{user}> uses Slack in {locale}; the app shows them its own words in {shown}."


@dataclass(frozen=True)
class Spoken:
    """What a person is shown: the words, and the Slack locale they came from (None: Slack
    did not say)."""

    words: Words
    slack_locale: str | None = None
    default: str = "en"  # ASSISTANT_LOCALE: the language the instructions are written in

    def line(self, user: str) -> str | None:
        """The system entry telling the model; None when Slack did not say, or said the
        deployment's own language (nothing the model would not assume)."""
        if self.slack_locale is None or supported(self.slack_locale) == self.default:
            return None
        return LOCALE_LINE.format(user=user, locale=self.slack_locale, shown=self.words.locale)


@dataclass(frozen=True)
class Languages:
    """One per process: the people's Slack locales as Slack last gave them, and the
    deployment's default (ASSISTANT_LOCALE)."""

    default: str = "en"
    people: UserLocales = field(default_factory=UserLocales)

    async def of(
        self,
        client: AsyncWebClient | None,
        team: str,
        user: str | None,
        rules: ChannelRules | None = None,
    ) -> Spoken:
        """What `user` is shown in a channel under `rules`."""
        if rules is None:
            return await self.person(client, team, user)
        return await self.person(client, team, user, rules.locale, rules.workspace_locale)

    async def person(
        self,
        client: AsyncWebClient | None,
        team: str,
        user: str | None,
        fixed: str | None = None,
        workspace: str | None = None,
    ) -> Spoken:
        """What `user` is shown where `fixed` is the language set there (None: none, as in
        the App Home) and `workspace` the workspace default's."""
        locale = None
        if client is not None and user is not None:
            locale = await self.people.of(client, team, user)
        words = Words(chosen(fixed, locale, workspace, self.default))
        return Spoken(words, locale, self.default)
