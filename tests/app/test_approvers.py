"""Who may approve, by the MCP file (docs/configuration.md#approvers): the channel's editors, a
user group (usergroups.users.list), and an approvals channel that gets the request with a link
back to the thread, whose click resumes the thread. A real MCP server on loopback, the real
app in process (the Bolt tier), the fake Slack and model."""

from __future__ import annotations

import json

import pytest

from assistant.fakes import ids
from assistant.fakes.events.panel import button_click, signed_interaction_request
from assistant.fakes.openai import responses as replies
from assistant.run.approvals.entries import ALLOW, ALLOW_ME
from context.channels import WORKSPACE_DEFAULT, ChannelConfig
from tests.app.test_mcp_approvals import ANSWER, CANCEL, click, finished, texts, wait_log
from tests.harness import mention as say
from tests.harness import thread_of
from tests.mcp_servers import ShopServer

pytestmark = pytest.mark.listeners

EDITOR = "U0EDITOR01"
OPS = "C0FAKEOPS1"
GROUP = "S0FINANCE1"


@pytest.fixture
def shop_server():
    server = ShopServer().start()
    yield server
    server.stop()


def shop_app(make_app, slack, shop_server, tmp_path, **server):
    slack.add_user(EDITOR, "eddie")
    slack.conversations.public(ids.CHANNEL_ID, [ids.USER_ID, EDITOR], name="general")
    slack.conversations.public(OPS, [EDITOR], name="ops")
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": {"shop": {"url": shop_server.url, **server}}}))
    app = make_app(assistant_mcp_file=str(path))
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel=WORKSPACE_DEFAULT, editors=(EDITOR,))
    )
    return app


def request(app, slack, model, channel: str = ids.CHANNEL_ID) -> tuple[dict, dict]:
    """The person asks for the cancel: the mention's event, and the request's message (with
    its buttons) once the run waits."""
    model.script(replies.tool_calls(CANCEL), ANSWER)
    event = say(slack, "please cancel my order A1")
    assert app.send_event(event).status == 200
    (call,) = slack.wait_for_call(
        "chat.postMessage",
        where=lambda c: c.params.get("channel") == channel and "blocks" in c.params,
    )
    wait_log(app, event, lambda log: any(t.startswith("Approval requested") for t in texts(log)))
    app.wait_idle()
    return event, call.response["message"]


def labels(message: dict) -> list[str]:
    return [
        e["action_id"] for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]
    ]


def test_editors_decide_and_the_asker_who_is_not_one_is_refused(
    make_app, slack, model, shop_server, tmp_path
):
    app = shop_app(make_app, slack, shop_server, tmp_path, approvers={"cancel_order": "editors"})
    event, message = request(app, slack, model)
    (asked,) = [t for t in texts(app.log(thread_of(event))) if t.startswith("Approval requested")]
    assert "; approvers editors)" in asked
    assert ALLOW_ME not in labels(message)  # "for me" is the asker's alone
    assert "the channel's editors" in json.dumps(message["blocks"])

    click(app, slack, message, ALLOW)  # the person who asked: no editor
    log = app.log(thread_of(event))
    assert texts(log)[-1].endswith("was refused: only the channel's editors may decide.")
    assert slack.ephemerals[-1]["user"] == ids.USER_ID
    assert not finished(log)

    click(app, slack, message, ALLOW, user=EDITOR)
    log = wait_log(app, event, finished)
    assert any(f"allowed by <@{EDITOR}> at " in t for t in texts(log))
    assert any(t.endswith("Order A1 cancelled") for t in texts(log))


def test_a_user_group_decides(make_app, slack, model, shop_server, tmp_path):
    app = shop_app(
        make_app, slack, shop_server, tmp_path, approvers={"cancel_order": {"usergroup": GROUP}}
    )
    slack.add_usergroup(GROUP, [EDITOR])
    event, message = request(app, slack, model)
    click(app, slack, message, ALLOW)  # not a member
    assert texts(app.log(thread_of(event)))[-1].endswith(
        f"was refused: only members of <!subteam^{GROUP}> may decide."
    )
    assert slack.calls_to("usergroups.users.list")[-1].params["usergroup"] == GROUP
    click(app, slack, message, ALLOW, user=EDITOR)
    log = wait_log(app, event, finished)
    assert any(t.endswith("Order A1 cancelled") for t in texts(log))


def test_the_approvals_channel_gets_the_request_with_a_link_and_its_click_resumes_the_thread(
    make_app, slack, model, shop_server, tmp_path
):
    app = shop_app(
        make_app,
        slack,
        shop_server,
        tmp_path,
        approvers={"cancel_order": "editors"},
        approvals_channel=OPS,
    )
    event, message = request(app, slack, model, channel=OPS)
    (permalink,) = slack.calls_to("chat.getPermalink")
    assert permalink.params["channel"] == ids.CHANNEL_ID
    assert permalink.response["permalink"] in json.dumps(message["blocks"])
    asked = next(t for t in texts(app.log(thread_of(event))) if t.startswith("Approval requested"))
    assert f"; posted in {OPS})" in asked
    notes = [
        c.params["text"]
        for c in slack.calls_to("chat.postMessage")
        if c.params.get("thread_ts") == event["ts"]
    ]
    assert any(f"<#{OPS}>" in n for n in notes)  # the thread is told where it waits

    click_in(app, slack, message, OPS, EDITOR)  # in the ops channel, by an editor
    log = wait_log(app, event, finished)
    assert any(t.endswith("Order A1 cancelled") for t in texts(log))
    updated = slack.calls_to("chat.update")[-1].params
    assert updated["channel"] == OPS and "Allowed by" in json.dumps(updated.get("blocks"))


def click_in(app, slack, message, channel: str, user: str) -> None:
    payload = button_click(message, ALLOW, channel=channel, user=user)
    body, headers = signed_interaction_request(payload)
    assert app.request("POST", "/slack/events", body, headers).status == 200
    app.wait_listeners()
