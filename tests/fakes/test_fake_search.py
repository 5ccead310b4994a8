"""The fake Slack's `assistant.search.context`, driven through slack-sdk's typed method: what the
token's person may read and nothing more, the channel types asked, permalinks, pages, and
Slack's refusals."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from assistant.fakes import FakeSlack, ids

BOB = "U0BOB0001"
SECRET = "G0SECRET01"
BOBS_DM = "D0BOBDM001"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        fake.add_user(BOB, "bob")
        fake.conversations.private(SECRET, [BOB], name="secret")
        fake.conversations.im(BOBS_DM, BOB)
        fake.add_message(ids.CHANNEL_ID, user=BOB, text="The offsite is in Lisbon")
        fake.add_message(SECRET, user=BOB, text="The offsite budget is secret")
        fake.add_message(BOBS_DM, user=BOB, text="offsite: bring a jacket")
        yield fake


def web(slack: FakeSlack) -> WebClient:
    return WebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)


def channels(answer) -> list[str]:
    return [m["channel_id"] for m in answer["results"]["messages"]]


def error_of(call) -> tuple[int, str]:
    with pytest.raises(SlackApiError) as failed:
        call()
    return failed.value.response.status_code, failed.value.response["error"]


def test_a_person_finds_what_they_may_read_with_permalinks(slack: FakeSlack) -> None:
    alice = slack.search.action_token(ids.USER_ID)
    answer = web(slack).assistant_search_context(query="offsite plans", action_token=alice)
    [found] = answer["results"]["messages"]
    assert found["content"] == "The offsite is in Lisbon"
    assert (found["channel_id"], found["author_user_id"], found["is_author_bot"]) == (
        ids.CHANNEL_ID,
        BOB,
        False,
    )
    ts = found["message_ts"].replace(".", "")
    assert found["permalink"] == f"https://{ids.TEAM_DOMAIN}.slack.com/archives/C0FAKECHN1/p{ts}"
    # Alice is in neither the private channel nor Bob's DM: asking for them finds nothing more.
    every = "public_channel,private_channel,mpim,im"
    answer = web(slack).assistant_search_context(
        query="offsite", action_token=alice, channel_types=every
    )
    assert channels(answer) == [ids.CHANNEL_ID]


def test_only_the_channel_types_asked_are_searched(slack: FakeSlack) -> None:
    bob = slack.search.action_token(BOB)
    answer = web(slack).assistant_search_context(query="offsite", action_token=bob)
    assert channels(answer) == [ids.CHANNEL_ID]  # public_channel by default
    answer = web(slack).assistant_search_context(
        query="offsite", action_token=bob, channel_types=["private_channel", "im"]
    )
    assert sorted(channels(answer)) == sorted([SECRET, BOBS_DM])


def test_results_come_a_page_at_a_time(slack: FakeSlack) -> None:
    for n in range(3):
        slack.add_message(ids.CHANNEL_ID, user=BOB, text=f"offsite note {n}")
    alice = slack.search.action_token(ids.USER_ID)
    first = web(slack).assistant_search_context(query="offsite", action_token=alice, limit=3)
    cursor = first["response_metadata"]["next_cursor"]
    assert len(first["results"]["messages"]) == 3 and cursor
    rest = web(slack).assistant_search_context(
        query="offsite", action_token=alice, limit=3, cursor=cursor
    )
    assert len(rest["results"]["messages"]) == 1
    assert rest["response_metadata"]["next_cursor"] == ""


def test_a_missing_unknown_or_expired_action_token_is_refused(slack: FakeSlack) -> None:
    client = web(slack)
    assert error_of(lambda: client.assistant_search_context(query="offsite")) == (
        200,
        "invalid_action_token",
    )
    assert error_of(
        lambda: client.assistant_search_context(query="offsite", action_token="1.2.forged")
    ) == (200, "invalid_action_token")
    token = slack.search.action_token(ids.USER_ID)
    slack.search.expire(token)
    assert error_of(
        lambda: client.assistant_search_context(query="offsite", action_token=token)
    ) == (200, "invalid_action_token")


def test_bad_arguments_and_scripted_refusals(slack: FakeSlack) -> None:
    client = web(slack)
    token = slack.search.action_token(ids.USER_ID)
    assert error_of(lambda: client.assistant_search_context(query=" ", action_token=token)) == (
        200,
        "invalid_arguments",
    )
    assert error_of(
        lambda: client.assistant_search_context(
            query="offsite", action_token=token, channel_types="everything"
        )
    ) == (200, "invalid_arguments")
    slack.fail("assistant.search.context", "feature_not_enabled")
    assert error_of(
        lambda: client.assistant_search_context(query="offsite", action_token=token)
    ) == (200, "feature_not_enabled")
    slack.rate_limit("assistant.search.context", retry_after=30)
    with pytest.raises(SlackApiError) as limited:
        client.assistant_search_context(query="offsite", action_token=token)
    assert limited.value.response.status_code == 429
    assert limited.value.response.headers["Retry-After"] == "30"
