"""Who may use the bot in a channel whose settings list them (assistant/run/loop/channel_access.py):
the user groups' members asked of Slack (the fake: its `usergroups.users.list` rules and
faults are the point), kept a while, and an unsure answer never taken for a no."""

from __future__ import annotations

import asyncio

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.fakes import FakeSlack, ids
from assistant.run.channels.channel_rules import ChannelRules
from assistant.run.loop.channel_access import ChannelAccess
from context.channels import Access

GROUP = "S0FAKEGRP1"


def rules(
    access: Access | None, users: tuple[str, ...] = (), groups: tuple[str, ...] = ()
) -> ChannelRules:
    return ChannelRules(lambda: "persona", None, True, access, users, groups)


def may_use(slack: FakeSlack, user: str, *checks: ChannelRules) -> list[bool]:
    """What one workspace's ChannelAccess answers to each check in turn."""

    async def ask() -> list[bool]:
        client = AsyncWebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)
        access = ChannelAccess(client)
        return [await access.may_use(ids.TEAM_ID, user, check) for check in checks]

    return asyncio.run(ask())


def test_without_a_list_everyone_may_and_slack_is_not_asked(slack: FakeSlack) -> None:
    assert may_use(slack, "U1", rules(None), rules("everyone", groups=(GROUP,))) == [True, True]
    assert may_use(slack, "U1", rules("listed", users=("U1",), groups=(GROUP,))) == [True]
    assert slack.calls_to("usergroups.users.list") == []


def test_a_groups_members_may_and_are_asked_for_once_a_while(slack: FakeSlack) -> None:
    slack.add_usergroup(GROUP, ["U1"])
    listed = rules("listed", users=("U9",), groups=(GROUP,))
    assert may_use(slack, "U1", listed, listed) == [True, True]
    assert may_use(slack, "U2", listed) == [False]
    assert len(slack.calls_to("usergroups.users.list")) == 2  # one per ChannelAccess


def test_a_group_slack_does_not_know_admits_nobody(slack: FakeSlack) -> None:
    slack.add_usergroup(GROUP, ["U1"])
    listed = rules("listed", groups=("S0NOSUCH01", GROUP))
    assert may_use(slack, "U1", listed) == [True]  # the next group is still asked
    assert may_use(slack, "U2", rules("listed", groups=("S0NOSUCH01",))) == [False]


@pytest.mark.parametrize("fault", ["server_error", "rate_limit", "fail"])
def test_an_answer_that_may_pass_is_no_answer(slack: FakeSlack, fault: str) -> None:
    slack.add_usergroup(GROUP, ["U1"])
    if fault == "fail":
        slack.fail("usergroups.users.list", "service_unavailable", times=5)
    else:
        getattr(slack, fault)("usergroups.users.list", times=5)
    with pytest.raises(SlackApiError):  # the run asks again later, deferred
        may_use(slack, "U2", rules("listed", groups=(GROUP,)))
