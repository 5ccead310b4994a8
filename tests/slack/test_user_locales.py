"""A person's Slack locale (assistant/slack/user_locales.py) against the fake Slack: asked with
`include_locale` (the fake answers `locale` only then, as Slack does), kept per person within
a bound, not kept when Slack fails, and never taken from an answer of another shape."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from assistant.fakes import ids
from assistant.slack.user_locales import UserLocales


def client_of(slack) -> AsyncWebClient:
    return AsyncWebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)


async def test_the_fake_answers_the_locale_only_when_asked(slack):
    slack.add_user("U0PT000001", "marta", locale="pt-BR")
    client = client_of(slack)
    plain = await client.users_info(user="U0PT000001")
    assert "locale" not in plain["user"]
    asked = await client.users_info(user="U0PT000001", include_locale=True)
    assert asked["user"]["locale"] == "pt-BR"


async def test_a_locale_is_asked_once_per_person_and_kept(slack):
    slack.add_user("U0PT000001", "marta", locale="pt-BR")
    client, locales = client_of(slack), UserLocales()
    assert await locales.of(client, ids.TEAM_ID, "U0PT000001") == "pt-BR"
    assert await locales.of(client, ids.TEAM_ID, "U0PT000001") == "pt-BR"
    assert await locales.of(client, ids.TEAM_ID, "U0NOSUCH01") is None  # user_not_found
    assert len(slack.calls_to("users.info")) == 2


async def test_a_failure_is_not_kept_and_a_malformed_locale_is_none(slack):
    slack.add_user("U0PT000001", "marta", locale="pt-BR")
    slack.add_user("U0ODD00001", "odd", locale="<script>")
    client, locales = client_of(slack), UserLocales()
    slack.fail("users.info", "ratelimited")
    assert await locales.of(client, ids.TEAM_ID, "U0PT000001") is None
    assert await locales.of(client, ids.TEAM_ID, "U0PT000001") == "pt-BR"  # asked again
    assert await locales.of(client, ids.TEAM_ID, "U0ODD00001") is None


async def test_the_people_kept_are_bounded(slack):
    for n in range(3):
        slack.add_user(f"U0PERSON0{n}", f"p{n}", locale="ja-JP")
    client = client_of(slack)
    locales = UserLocales()
    locales._known = type(locales._known)(maxsize=2, ttl=3600)
    for n in range(3):
        assert await locales.of(client, ids.TEAM_ID, f"U0PERSON0{n}") == "ja-JP"
    assert len(locales._known) == 2
