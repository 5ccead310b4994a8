"""The fake Slack's `views.publish` and `views.open` (assistant/fakes/slack/views.py) refuse
what real Slack refuses of a view, Block Kit's documented limits (slack_blocks.py), with
`invalid_arguments` and Slack's `response_metadata.messages`; and its `users.conversations`
lists a person's channels, a private one only when the bot is in it too, page by page."""

from __future__ import annotations

import pytest
from slack_sdk.errors import SlackApiError

from assistant.fakes import FakeSlack, ids
from tests.fakes.test_fake_streams import slack_client


def section(text: str, **more: object) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}, **more}


def select(options: int) -> dict:
    choices = [
        {"text": {"type": "plain_text", "text": f"o{n}"}, "value": f"{n}"} for n in range(options)
    ]
    return {"type": "static_select", "action_id": "pick", "options": choices}


def text_input(**element: object) -> dict:
    return {
        "type": "input", "block_id": "persona", "label": {"type": "plain_text", "text": "Persona"},
        "element": {"type": "plain_text_input", "action_id": "value", **element},
    }  # fmt: skip


def button(text: str = "Edit", **more: object) -> dict:
    return {
        "type": "button",
        "action_id": "edit",
        "text": {"type": "plain_text", "text": text},
        **more,
    }


def modal(blocks: list[dict], title: str = "Settings", **more: object) -> dict:
    return {
        "type": "modal",
        "title": {"type": "plain_text", "text": title},
        "blocks": blocks,
        **more,
    }


def less(most: int, where: str) -> str:
    return f"must be less than {most + 1} characters [json-pointer:/view{where}]"


def items(most: int, where: str) -> str:
    return f"no more than {most} items allowed [json-pointer:/view{where}]"


# What breaks one limit, and where Slack says it is.
HEADER = {"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}
TOO_MUCH = [
    ([section("x")] * 101, {}, items(100, "/blocks")),
    ([section("x" * 3001)], {}, less(3000, "/blocks/0/text/text")),
    ([section("")], {}, "must be more than 0 characters [json-pointer:/view/blocks/0/text/text]"),
    ([HEADER], {}, less(150, "/blocks/0/text/text")),
    ([section("x", block_id="b" * 256)], {}, less(255, "/blocks/0/block_id")),
    ([section("x", accessory=button("e" * 76))], {}, less(75, "/blocks/0/accessory/text/text")),
    ([section("x", accessory=button(action_id="a" * 256))], {},
     less(255, "/blocks/0/accessory/action_id")),
    ([section("x", accessory=select(101))], {}, items(100, "/blocks/0/accessory/options")),
    ([{"type": "actions", "elements": [button(value=str(n)) for n in range(26)]}], {},
     items(25, "/blocks/0")),
    ([{"type": "context", "elements": [{"type": "mrkdwn", "text": "c"}] * 11}], {},
     items(10, "/blocks/0")),
    ([section("x")], {"private_metadata": "m" * 3001}, less(3000, "/private_metadata")),
    ([section("x")], {"callback_id": "c" * 256}, less(255, "/callback_id")),
]  # fmt: skip


@pytest.mark.parametrize(("blocks", "fields", "message"), TOO_MUCH)
def test_views_publish_refuses_a_home_tab_beyond_block_kit_s_limits(blocks, fields, message):
    with FakeSlack() as slack:
        client = slack_client(slack)
        with pytest.raises(SlackApiError) as caught:
            client.views_publish(
                user_id=ids.USER_ID, view={"type": "home", "blocks": blocks, **fields}
            )
        assert caught.value.response["error"] == "invalid_arguments"
        assert caught.value.response["response_metadata"]["messages"] == [f"[ERROR] {message}"]
        assert slack.home_tabs == {}
        # At the limit, taken.
        client.views_publish(
            user_id=ids.USER_ID, view={"type": "home", "blocks": [section("x" * 3000)] * 100}
        )


GROUPED = {
    **select(0),
    "options": None,
    "option_groups": [
        {"label": {"type": "plain_text", "text": "g"}, "options": select(101)["options"]}
    ],
}
MODAL_TOO_MUCH = [
    (modal([section("x")], title="t" * 25), less(24, "/title/text")),
    (modal([text_input(initial_value="p" * 3001)]), less(3000, "/blocks/0/element/initial_value")),
    (modal([text_input(max_length=3001)]),
     "must be between 1 and 3000 [json-pointer:/view/blocks/0/element/max_length]"),
    (modal([{**text_input(), "element": {k: v for k, v in GROUPED.items() if v is not None}}]),
     items(100, "/blocks/0/element/option_groups/0/options")),
    ({"type": "home", "blocks": []}, "must be modal [json-pointer:/view/type]"),
]  # fmt: skip


@pytest.mark.parametrize(("view", "message"), MODAL_TOO_MUCH)
def test_views_open_refuses_a_modal_beyond_block_kit_s_limits(view, message):
    with FakeSlack() as slack:
        client = slack_client(slack)
        trigger = slack.issue_trigger()
        with pytest.raises(SlackApiError) as caught:
            client.views_open(trigger_id=trigger, view=view)
        assert caught.value.response["error"] == "invalid_arguments"
        assert caught.value.response["response_metadata"]["messages"] == [f"[ERROR] {message}"]
        # The trigger is not used up by a refused view.
        client.views_open(trigger_id=trigger, view=modal([text_input(initial_value="p" * 3000)]))
        assert len(slack.modals) == 1


def test_users_conversations_lists_a_person_s_channels_page_by_page():
    with FakeSlack() as slack:
        bob = "U0BOB00001"
        for n in range(5):
            slack.conversations.public(f"C0PUB{n:05d}", [ids.USER_ID, bob] if n % 2 else [bob])
        slack.conversations.private("C0PRIV0001", [ids.USER_ID])
        slack.conversations.private("C0PRIV0002", [ids.USER_ID], bot=False)  # not listed
        client = slack_client(slack)
        found, cursor, pages = [], None, 0
        while True:
            answer = client.users_conversations(
                user=ids.USER_ID, types="public_channel,private_channel", limit=2, cursor=cursor
            )
            found += [c["id"] for c in answer["channels"]]
            pages += 1
            cursor = answer["response_metadata"]["next_cursor"]
            if not cursor:
                break
        mine = [ids.CHANNEL_ID, "C0PUB00001", "C0PUB00003"]
        assert (found, pages) == ([*mine, "C0PRIV0001"], 2)
        public = client.users_conversations(user=ids.USER_ID)["channels"]
        assert [c["id"] for c in public] == mine
        assert "is_member" not in public[0]
        for bad in ({"limit": 1000}, {"types": "channels"}, {"cursor": "bm9wZQ=="}):
            with pytest.raises(SlackApiError) as caught:
                client.users_conversations(user=ids.USER_ID, **bad)
            assert caught.value.response["error"] in (
                "invalid_limit",
                "invalid_types",
                "invalid_cursor",
            )
