"""The fake Slack's conversations.info and conversations.members, driven through slack-sdk."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from assistant.fakes import FakeSlack, ids

BOB, CAROL = "U0BOB0001", "U0CAROL01"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def web(slack: FakeSlack) -> WebClient:
    return WebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)


def error_of(call) -> str:
    with pytest.raises(SlackApiError) as failed:
        call()
    return failed.value.response["error"]


def test_the_default_channel_and_dm_are_declared(slack: FakeSlack) -> None:
    channel = web(slack).conversations_info(channel=ids.CHANNEL_ID)["channel"]
    assert (channel["is_channel"], channel["is_private"], channel["is_member"]) == (
        True,
        False,
        True,
    )
    assert channel["context_team_id"] == ids.TEAM_ID
    dm = web(slack).conversations_info(channel=ids.DM_CHANNEL_ID)["channel"]
    assert dm["is_im"] is True and dm["user"] == ids.USER_ID
    members = web(slack).conversations_members(channel=ids.DM_CHANNEL_ID)["members"]
    assert members == [ids.USER_ID, ids.BOT_USER_ID]


def test_each_kind_is_described_as_slack_does(slack: FakeSlack) -> None:
    slack.conversations.private("C0PRIV0001", [BOB], name="secret")
    slack.conversations.mpim("G0MPIM0001", [BOB, CAROL])
    private = web(slack).conversations_info(channel="C0PRIV0001")["channel"]
    assert private["is_channel"] and private["is_private"] and not private["is_mpim"]
    assert private["name"] == "secret" and private["shared_team_ids"] == [ids.TEAM_ID]
    group = web(slack).conversations_info(channel="G0MPIM0001", include_num_members=True)
    assert group["channel"]["is_mpim"] and group["channel"]["is_private"]
    assert not group["channel"]["is_channel"]
    assert group["channel"]["num_members"] == 3


def test_what_the_bot_is_not_in_is_not_found(slack: FakeSlack) -> None:
    slack.conversations.private("C0PRIV0002", [BOB], bot=False)
    slack.conversations.mpim("G0MPIM0002", [BOB, CAROL], bot=False)
    slack.conversations.public("C0PUBL0002", [BOB], bot=False)
    client = web(slack)
    for channel in ("C0PRIV0002", "G0MPIM0002", "C0NEVER001"):
        assert error_of(lambda c=channel: client.conversations_info(channel=c)) == (
            "channel_not_found"
        )
        assert error_of(lambda c=channel: client.conversations_members(channel=c)) == (
            "channel_not_found"
        )
    public = client.conversations_info(channel="C0PUBL0002")["channel"]
    assert public["is_member"] is False  # a public channel is described all the same
    assert client.conversations_members(channel="C0PUBL0002")["members"] == [BOB]


def test_members_are_paged_with_a_cursor(slack: FakeSlack) -> None:
    people = [f"U0PERSON{n:02d}" for n in range(7)]
    slack.conversations.private("C0PRIV0003", people)
    client = web(slack)
    first = client.conversations_members(channel="C0PRIV0003", limit=3)
    pages = [page["members"] for page in first]
    assert pages == [people[:3], people[3:6], [people[6], ids.BOT_USER_ID]]
    calls = slack.calls_to("conversations.members")
    assert [bool(c.params.get("cursor")) for c in calls] == [False, True, True]
    assert calls[-1].response["response_metadata"]["next_cursor"] == ""


def test_bad_paging_arguments_are_errors(slack: FakeSlack) -> None:
    client = web(slack)
    assert error_of(lambda: client.conversations_members(channel=ids.CHANNEL_ID, limit=0)) == (
        "invalid_limit"
    )
    assert (
        error_of(lambda: client.conversations_members(channel=ids.CHANNEL_ID, cursor="not-base64!"))
        == "invalid_cursor"
    )
