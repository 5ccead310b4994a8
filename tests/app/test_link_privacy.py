"""A link to a Slack message is not a permission: a linked message is read only when the
person who posted the link may see its conversation, as Slack shows it. Through the app's Bolt
app, the fake Slack's declared conversations, the fake model's requests."""

from __future__ import annotations

import json

import pytest

from assistant.fakes import ids
from tests.harness import answered_log, script_answers, thread_of
from tests.harness import mention as say

# How requests are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

ALICE = ids.USER_ID  # who posts the links (the events' default user)
BOB, CAROL = "U0BOB0001", "U0CAROL01"
SECRET = "Layoffs are planned for Friday."
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(200)
NOT_VISIBLE = (
    f"(The linked message is in a conversation <@{ALICE}> may not see, so it was not read.)"
)
OTHER_WORKSPACE = "(The linked message is in another workspace, so it was not read.)"
READS = ("conversations.history", "conversations.replies")


def link(channel: str, ts: str, thread_ts: str | None = None, host: str | None = None) -> str:
    host = host or f"{ids.TEAM_DOMAIN}.slack.com"
    url = f"https://{host}/archives/{channel}/p{ts.replace('.', '')}"
    if thread_ts:
        url += f"?thread_ts={thread_ts}&cid={channel}"
    return f"<{url}>"


def reads_of(slack, channel: str) -> list:
    """The calls that read messages of `channel`."""
    return [c for c in slack.calls if c.method in READS and c.params.get("channel") == channel]


def assert_nothing_of_it_went_anywhere(app, slack, model, event, channel: str) -> None:
    assert reads_of(slack, channel) == []
    assert slack.downloads == []
    assert SECRET not in json.dumps(model.requests)
    copies, _ = app.assistant.store.thread_messages(thread_of(event))
    assert all(SECRET not in copy.text for copy in copies)


# --- refused ---------------------------------------------------------------------------------


def test_a_private_channel_the_poster_is_not_in_is_not_read(app, slack, model):
    script_answers(model)
    slack.conversations.private("C0SECRET01", [BOB], name="leadership")
    image = slack.add_file("plan.png", "image/png", PNG)
    secret = slack.add_message("C0SECRET01", user=BOB, text=SECRET, files=[image])
    text = f"what is this about? {link('C0SECRET01', secret['ts'])}"
    event = say(slack, text)
    log = answered_log(app, slack, event)
    assert log[1]["content"]["text"] == f"{text}\n{NOT_VISIBLE}"
    assert_nothing_of_it_went_anywhere(app, slack, model, event, "C0SECRET01")
    assert slack.calls_to("conversations.members")  # it was asked, and the answer was no


def test_a_reply_in_a_private_thread_is_not_read(app, slack, model):
    script_answers(model)
    slack.conversations.private("C0SECRET02", [BOB, CAROL])
    parent = slack.add_message("C0SECRET02", user=BOB, text="Budget review")
    reply = slack.add_message("C0SECRET02", user=CAROL, text=SECRET, thread_ts=parent["ts"])
    text = f"see {link('C0SECRET02', reply['ts'], parent['ts'])}"
    event = say(slack, text)
    log = answered_log(app, slack, event)
    assert log[1]["content"]["text"] == f"{text}\n{NOT_VISIBLE}"
    assert_nothing_of_it_went_anywhere(app, slack, model, event, "C0SECRET02")


def test_another_person_s_dm_with_the_bot_is_not_read(app, slack, model):
    script_answers(model)
    slack.conversations.im("D0BOBDM001", BOB)
    secret = slack.add_message("D0BOBDM001", user=BOB, text=SECRET)
    text = f"what did Bob ask you? {link('D0BOBDM001', secret['ts'])}"
    event = say(slack, text)
    log = answered_log(app, slack, event)
    assert log[1]["content"]["text"] == f"{text}\n{NOT_VISIBLE}"
    assert_nothing_of_it_went_anywhere(app, slack, model, event, "D0BOBDM001")


def test_a_group_dm_the_poster_is_not_in_is_not_read(app, slack, model):
    script_answers(model)
    slack.conversations.mpim("G0GROUP001", [BOB, CAROL])
    secret = slack.add_message("G0GROUP001", user=CAROL, text=SECRET)
    text = f"summarise {link('G0GROUP001', secret['ts'])}"
    event = say(slack, text)
    log = answered_log(app, slack, event)
    assert log[1]["content"]["text"] == f"{text}\n{NOT_VISIBLE}"
    assert_nothing_of_it_went_anywhere(app, slack, model, event, "G0GROUP001")


@pytest.mark.parametrize("where", ["by its address", "by its conversation"])
def test_another_workspace_s_message_is_not_read(app, slack, model, where):
    script_answers(model)
    if where == "by its address":
        channel, host = "C0OTHERWS1", "other-team.slack.com"
    else:  # our address, but Slack says the conversation belongs to another workspace
        channel, host = "C0OTHERWS2", None
        slack.conversations.public(channel, [BOB], team="T0OTHERTEAM")
    secret = slack.add_message(channel, user=BOB, text=SECRET)
    text = f"look {link(channel, secret['ts'], host=host)}"
    event = say(slack, text)
    log = answered_log(app, slack, event)
    assert log[1]["content"]["text"] == f"{text}\n{OTHER_WORKSPACE}"
    assert_nothing_of_it_went_anywhere(app, slack, model, event, channel)
    if where == "by its address":
        assert slack.calls_to("conversations.info") == []  # refused without asking


@pytest.mark.parametrize(
    ("fault", "note"),
    [
        ("missing_scope", "(The linked message could not be read: missing_scope.)"),
        # slack-sdk's retries with backoff outlast the read deadline (assistant.intake.deadline).
        ("unreachable", "(The linked message could not be read in time.)"),
    ],
)
def test_when_slack_cannot_say_the_link_is_not_read(app, slack, model, fault, note):
    script_answers(model)
    slack.conversations.private("C0SECRET03", [ALICE, BOB])  # she could, if Slack said so
    if fault == "unreachable":
        # Every try fails: slack-sdk's 3 retries, each of which aiohttp may try twice on a
        # reused connection.
        slack.disconnect("conversations.members", times=8)
    else:
        slack.fail("conversations.info", fault)
    secret = slack.add_message("C0SECRET03", user=BOB, text=SECRET)
    text = f"see {link('C0SECRET03', secret['ts'])}"
    event = say(slack, text)
    log = answered_log(app, slack, event)
    assert log[1]["content"]["text"] == f"{text}\n{note}"
    assert_nothing_of_it_went_anywhere(app, slack, model, event, "C0SECRET03")


# --- allowed ---------------------------------------------------------------------------------


def test_a_member_s_own_private_channel_is_quoted(app, slack, model):
    script_answers(model)
    slack.conversations.private("C0TEAMROOM", [BOB, ALICE])
    linked = slack.add_message("C0TEAMROOM", user=BOB, text="Ship it on Monday.")
    text = f"thoughts? {link('C0TEAMROOM', linked['ts'])}"
    log = answered_log(app, slack, say(slack, text))
    assert log[1]["content"]["text"] == f'{text}\n<@{BOB}> said:\n"Ship it on Monday."'
    assert [c.params["channel"] for c in slack.calls_to("conversations.members")] == ["C0TEAMROOM"]


def test_membership_is_found_on_a_later_page(app, slack, model):
    script_answers(model)
    crowd = [f"U0CROWD{n:04d}" for n in range(1_200)]
    slack.conversations.private("C0BIGROOM1", [*crowd, ALICE])
    linked = slack.add_message("C0BIGROOM1", user=BOB, text="All hands at 3.")
    text = f"when? {link('C0BIGROOM1', linked['ts'])}"
    log = answered_log(app, slack, say(slack, text))
    assert log[1]["content"]["text"] == f'{text}\n<@{BOB}> said:\n"All hands at 3."'
    pages = slack.calls_to("conversations.members")
    assert len(pages) == 2 and pages[1].params["cursor"]


def test_a_public_channel_is_quoted_without_asking_who_is_in_it(app, slack, model):
    script_answers(model)
    slack.conversations.public("C0RANDOM01", [BOB], name="random")
    linked = slack.add_message("C0RANDOM01", user=BOB, text="Cake in the kitchen.")
    text = f"still there? {link('C0RANDOM01', linked['ts'])}"
    log = answered_log(app, slack, say(slack, text))
    assert log[1]["content"]["text"] == f'{text}\n<@{BOB}> said:\n"Cake in the kitchen."'
    assert [c.params["channel"] for c in slack.calls_to("conversations.info")] == ["C0RANDOM01"]
    assert slack.calls_to("conversations.members") == []


def test_a_link_into_the_same_conversation_is_quoted_without_asking(app, slack, model):
    script_answers(model)
    # A private channel Slack is never asked about: the poster is writing in it.
    earlier = slack.add_message("C0PRIVROOM", user=BOB, text="The key is under the mat.")
    text = f"is this still true? {link('C0PRIVROOM', earlier['ts'])}"
    log = answered_log(app, slack, say(slack, text, channel="C0PRIVROOM"))
    assert log[1]["content"]["text"] == f'{text}\n<@{BOB}> said:\n"The key is under the mat."'
    assert slack.calls_to("conversations.info") == []
    assert slack.calls_to("conversations.members") == []


def test_the_answer_is_kept_for_the_next_message(app, slack, model):
    script_answers(model, 2)
    slack.conversations.private("C0TEAMROOM", [BOB, ALICE])
    first = slack.add_message("C0TEAMROOM", user=BOB, text="First.")
    second = slack.add_message("C0TEAMROOM", user=BOB, text="Second.")
    opening = say(slack, f"a {link('C0TEAMROOM', first['ts'])}")
    answered_log(app, slack, opening)
    text = f"b {link('C0TEAMROOM', second['ts'])}"
    log = answered_log(app, slack, say(slack, text, thread_ts=opening["ts"]))
    said = [e["content"]["text"] for e in log if e["role"] == "user"]
    assert said[-1] == f'{text}\n<@{BOB}> said:\n"Second."'
    assert len(slack.calls_to("conversations.members")) == 1
    assert len(slack.calls_to("conversations.info")) == 1
