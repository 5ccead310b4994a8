"""`LinkAccess` against the fake Slack: its answers are kept briefly, then asked again, so a
person who leaves a conversation stops seeing its linked messages within a minute."""

from __future__ import annotations

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from assistant.fakes import FakeSlack, ids
from assistant.intake.link_access import ANSWER_SECONDS, LinkAccess, Poster

BOB = "U0BOB0001"
HOST = f"{ids.TEAM_DOMAIN}.slack.com"
POSTER = Poster(ids.TEAM_ID, ids.CHANNEL_ID, ids.USER_ID)
NOT_VISIBLE = (
    f"(The linked message is in a conversation <@{ids.USER_ID}> may not see, so it was not read.)"
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def client(slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)


async def test_a_person_who_leaves_loses_access_once_the_answer_expires(slack, client):
    clock = Clock()
    access = LinkAccess(client, clock=clock)
    slack.conversations.private("C0TEAMROOM", [BOB, ids.USER_ID])
    assert await access.refusal(POSTER, "C0TEAMROOM", HOST) is None
    slack.conversations.private("C0TEAMROOM", [BOB])  # she left
    clock.now += ANSWER_SECONDS - 1
    assert await access.refusal(POSTER, "C0TEAMROOM", HOST) is None  # the kept answer
    assert len(slack.calls_to("conversations.members")) == 1
    clock.now += 1
    assert await access.refusal(POSTER, "C0TEAMROOM", HOST) == NOT_VISIBLE
    assert len(slack.calls_to("conversations.members")) == 2


async def test_the_workspace_address_is_asked_once(slack, client):
    access = LinkAccess(client)
    slack.conversations.public("C0RANDOM01", [BOB])
    for _ in range(3):
        assert await access.refusal(POSTER, "C0RANDOM01", HOST.upper()) is None
    assert len(slack.calls_to("auth.test")) == 1
    assert len(slack.calls_to("conversations.info")) == 1


async def test_an_enterprise_address_is_judged_by_the_conversation(slack, client):
    access = LinkAccess(client)
    slack.conversations.public("C0RANDOM01", [BOB])
    slack.conversations.public("C0ELSEWHER", [BOB], team="T0OTHERTEAM")
    org = "fake-org.enterprise.slack.com"
    assert await access.refusal(POSTER, "C0RANDOM01", org) is None
    assert await access.refusal(POSTER, "C0ELSEWHER", org) == (
        "(The linked message is in another workspace, so it was not read.)"
    )
