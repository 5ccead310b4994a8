"""Grants and the checks on a click (docs/slack-features.md#grants): "Always allow for me / for
everyone in this channel", used by a later call of the same tool, person and channel and by no
other; revoked (the App Home, the store); a click whose button showed other arguments than the
call's; Deny's form, whose reason the model reads. A real MCP
server on loopback, the real app in process (the Bolt tier), the fake Slack and model."""

from __future__ import annotations

import json

import pytest

from assistant.fakes import ids
from assistant.fakes.events.home import home_click, view_submission
from assistant.fakes.events.panel import button_click, signed_interaction_request
from assistant.fakes.openai import responses as replies
from assistant.panel.home_views import REVOKE_ACTION
from assistant.run.approvals.entries import ALLOW, ALLOW_EVERYONE, ALLOW_ME, DENY, DENY_FORM
from context.channels import WORKSPACE_DEFAULT, ChannelConfig
from tests.app.test_app_home import open_home
from tests.app.test_channel_settings import interact, text_of
from tests.app.test_mcp_approvals import ANSWER, CANCEL, asked, click, finished, texts, wait_log
from tests.harness import mention as say
from tests.harness import thread_of
from tests.mcp_servers import ShopServer

pytestmark = pytest.mark.listeners

BOB = "U0FAKEBOB1"
OTHER_CHANNEL = "C0FAKEOPS2"
LOOKUP = ("shop__lookup_order", {"order": "A1", "reasoning": "the person asked"})


@pytest.fixture
def shop_server():
    server = ShopServer().start()
    yield server
    server.stop()


@pytest.fixture
def app(make_app, slack, shop_server, tmp_path):
    slack.add_user(BOB, "bob")
    slack.conversations.public(ids.CHANNEL_ID, [ids.USER_ID, BOB], name="general")
    slack.conversations.public(OTHER_CHANNEL, [ids.USER_ID, BOB], name="ops")
    path = tmp_path / "mcp.json"
    # lookup_order is read-only; the file asks for it all the same: a tool a grant of
    # cancel_order must not cover.
    shop = {"url": shop_server.url, "approve": {"lookup_order": "always"}}
    path.write_text(json.dumps({"servers": {"shop": shop}}))
    return make_app(assistant_mcp_file=str(path))


def granted(app, slack, model, action_id: str) -> dict:
    """The person asks for the cancel, and clicks `action_id`; until the run finished."""
    model.script(replies.tool_calls(CANCEL), ANSWER)
    event = say(slack, "please cancel my order A1")
    message = asked(app, slack, event)
    click(app, slack, message, action_id)
    wait_log(app, event, finished)
    app.wait_idle()
    return event


def later_call(
    app, slack, model, call=CANCEL, user=ids.USER_ID, channel=ids.CHANNEL_ID, asks=False
):
    """A later mention in a new thread that makes `call`: the thread's system entries once it
    finished or waits for an approval (`asks`: the model is asked nothing more)."""
    model.script(replies.tool_calls(call), *([] if asks else [ANSWER]))
    event = say(slack, "again please", user=user, channel=channel)
    assert app.send_event(event).status == 200

    def done(log):
        return finished(log) or any(t.startswith("Approval requested") for t in texts(log))

    log = wait_log(app, event, done)
    app.wait_idle()
    return texts(log)


def test_a_grant_for_me_runs_my_later_calls_of_the_tool_here_and_no_one_elses(app, slack, model):
    event = granted(app, slack, model, ALLOW_ME)
    first = texts(app.log(thread_of(event)))
    given = next(t for t in first if t.startswith("Grant "))
    assert given.startswith(f"Grant 1 given by <@{ids.USER_ID}> at ")
    assert given.endswith(
        f": shop__cancel_order runs without asking for <@{ids.USER_ID}> in this channel (entry 2)."
    )
    assert any(t.endswith("Order A1 cancelled") for t in first)  # allowed this once too
    shown = json.dumps(slack.calls_to("chat.update")[-1].params.get("blocks"))
    assert f"From now on it runs without asking for <@{ids.USER_ID}> in this channel" in shown
    (grant,) = app.assistant.store.grants(ids.TEAM_ID)
    assert (grant.channel, grant.server, grant.tool, grant.user) == (
        ids.CHANNEL_ID,
        "shop",
        "cancel_order",
        ids.USER_ID,
    )

    mine = later_call(app, slack, model)
    assert mine[1].startswith(
        f"Allowed by grant 1: shop__cancel_order (entry 2) runs without asking for "
        f"<@{ids.USER_ID}> (given by <@{ids.USER_ID}> at "
    )
    assert mine[2].endswith("Order A1 cancelled")
    assert not any(t.startswith("Approval requested") for t in mine)

    bobs = later_call(app, slack, model, user=BOB, asks=True)  # another person
    assert bobs[-1].startswith(
        f"Approval requested: shop__cancel_order (entry 2) waits for <@{BOB}>"
    )
    elsewhere = later_call(app, slack, model, channel=OTHER_CHANNEL, asks=True)
    assert elsewhere[-1].startswith("Approval requested: shop__cancel_order")
    other_tool = later_call(app, slack, model, call=LOOKUP, asks=True)  # another tool
    assert other_tool[-1].startswith("Approval requested: shop__lookup_order")


def test_an_editor_grants_everyone_in_the_channel(app, slack, model):
    store = app.assistant.store
    store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel=WORKSPACE_DEFAULT, editors=(ids.USER_ID,))
    )
    event = granted(app, slack, model, ALLOW_EVERYONE)
    assert any(
        t.endswith(
            ": shop__cancel_order runs without asking for everyone in this channel (entry 2)."
        )
        for t in texts(app.log(thread_of(event)))
    )
    bobs = later_call(app, slack, model, user=BOB)
    assert bobs[1].startswith(
        f"Allowed by grant 1: shop__cancel_order (entry 2) runs without asking for <@{BOB}> "
    )
    assert bobs[1].endswith("for everyone in this channel).")
    elsewhere = later_call(app, slack, model, user=BOB, channel=OTHER_CHANNEL, asks=True)
    assert elsewhere[-1].startswith("Approval requested: shop__cancel_order")


def test_everyone_from_someone_who_edits_no_channel_is_refused_and_the_call_waits(
    app, slack, model
):
    model.script(replies.tool_calls(CANCEL), ANSWER)
    event = say(slack, "please cancel my order A1")
    message = asked(app, slack, event)
    click(app, slack, message, ALLOW_EVERYONE)
    log = app.log(thread_of(event))
    assert texts(log)[-1].endswith(
        "to allow it for everyone in the channel was refused: only the channel's editors may."
    )
    assert not finished(log)
    assert app.assistant.store.grants(ids.TEAM_ID) == []
    (told,) = slack.ephemerals
    assert told["user"] == ids.USER_ID and "editors" in told["text"]

    click(app, slack, message, ALLOW)  # allowed once: still theirs to decide
    assert any(t.endswith("Order A1 cancelled") for t in texts(wait_log(app, event, finished)))


def test_a_revoked_grant_asks_again(app, slack, model):
    granted(app, slack, model, ALLOW_ME)
    store = app.assistant.store
    (grant,) = store.grants(ids.TEAM_ID)
    revoked = store.revoke_grant(ids.TEAM_ID, grant.id, BOB)
    assert revoked is not None and revoked.revoked_by == BOB
    assert store.revoke_grant(ids.TEAM_ID, grant.id, BOB) is None  # once
    again = later_call(app, slack, model, asks=True)
    assert again[-1].startswith("Approval requested: shop__cancel_order")
    assert store.grants(ids.TEAM_ID) == [] and len(store.grants(ids.TEAM_ID, revoked=True)) == 1


def test_a_click_on_a_button_that_showed_other_arguments_is_refused(app, slack, model):
    model.script(replies.tool_calls(CANCEL), ANSWER)
    event = say(slack, "please cancel my order A1")
    message = asked(app, slack, event)
    payload = button_click(message, ALLOW, channel=ids.CHANNEL_ID)
    value = payload["actions"][0]["value"]
    payload["actions"][0]["value"] = value.rsplit("|", 1)[0] + "|" + "0" * 16  # other arguments
    body, headers = signed_interaction_request(payload)
    assert app.request("POST", "/slack/events", body, headers).status == 200
    app.wait_listeners()
    log = app.log(thread_of(event))
    assert texts(log)[-1].startswith(
        f"Approval of shop__cancel_order (entry 2): a click by <@{ids.USER_ID}> at "
    )
    assert (
        "was refused: it showed other arguments than the call's (hash 0000000000000000"
        in (texts(log)[-1])
    )
    assert not finished(log)
    assert "nothing was decided" in slack.ephemerals[-1]["text"]

    click(app, slack, message, ALLOW)  # the button as shown: the call's own arguments
    assert any(t.endswith("Order A1 cancelled") for t in texts(wait_log(app, event, finished)))


def test_the_app_home_lists_grants_and_revokes_one_only_for_whom_may(app, slack, model):
    event = granted(app, slack, model, ALLOW_ME)
    bobs_tab = open_home(app, slack, BOB)  # in the channel: sees it, may not revoke it
    assert "shop__cancel_order" in text_of(bobs_tab)
    assert revoke_buttons(bobs_tab) == []
    mine = open_home(app, slack, ids.USER_ID)
    assert revoke_buttons(mine) == ["1"]

    home_click_as(app, slack, mine, "1", BOB)  # a forged click: refused, nothing revoked
    assert len(app.assistant.store.grants(ids.TEAM_ID)) == 1
    home_click_as(app, slack, mine, "1", ids.USER_ID)
    assert app.assistant.store.grants(ids.TEAM_ID) == []
    last = texts(app.log(thread_of(event)))[-1]
    assert last.startswith(f"Grant 1 revoked by <@{ids.USER_ID}> at ")
    assert "shop__cancel_order" not in text_of(slack.home_tabs[ids.USER_ID])
    assert later_call(app, slack, model, asks=True)[-1].startswith("Approval requested")


def revoke_buttons(tab: dict) -> list[str]:
    return [
        block["accessory"]["value"]
        for block in tab["blocks"]
        if (block.get("accessory") or {}).get("action_id") == REVOKE_ACTION
    ]


def home_click_as(app, slack, tab: dict, value: str, user: str) -> None:
    before = len(slack.calls_to("views.publish"))
    status, _ = interact(app, home_click(slack, tab, REVOKE_ACTION, value, user=user))
    assert status == 200
    app.wait_listeners()
    if user == ids.USER_ID:  # the tab shown again once revoked
        slack.wait_for_call("views.publish", count=before + 1)


def test_deny_opens_a_form_whose_reason_the_model_reads(app, slack, model):
    model.script(replies.tool_calls(CANCEL), ANSWER)
    event = say(slack, "please cancel my order A1")
    message = asked(app, slack, event)
    payload = button_click(message, DENY, channel=ids.CHANNEL_ID)
    payload["trigger_id"] = slack.issue_trigger()  # one Slack gave: the form opens
    status, _ = interact(app, payload)
    assert status == 200
    app.wait_listeners()
    form = slack.modals[-1]
    assert form["callback_id"] == DENY_FORM
    assert not any(" denied by " in t for t in texts(app.log(thread_of(event))))  # not yet

    typed = {"reason": {"type": "plain_text_input", "value": "It shipped already;\nask support"}}
    status, _ = interact(app, view_submission(slack, form, typed, user=BOB))  # forged: refused
    assert status == 200
    app.wait_listeners()
    assert not any(" denied by " in t for t in texts(app.log(thread_of(event))))
    status, _ = interact(app, view_submission(slack, form, typed))
    assert status == 200
    log = wait_log(app, event, finished)
    app.wait_idle()
    result = next(t for t in texts(log) if t.startswith("Not carried out"))
    assert result.startswith(
        f"Not carried out: shop__cancel_order (entry 2) was denied by <@{ids.USER_ID}> at "
    )
    assert result.endswith(". Reason: It shipped already; ask support")
    assert "It shipped already; ask support" in json.dumps(model.requests[-1])
    assert "Order A1 cancelled" not in json.dumps(log)
