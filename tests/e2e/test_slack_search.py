"""searchSlack end to end (docs/slack-features.md, "Searching Slack"): offered only where
a channel turns Slack search on; `assistant.search.context` asked with the action token of the
message being answered and only the channel's conversation types; results with permalinks, which
the answer cites; each refusal of Slack's told to the model while the run goes on; a person never
gets what they may not read; the token never printed."""

from __future__ import annotations

import pytest

from assistant.fakes import ids
from assistant.fakes.events import builders as events
from assistant.fakes.openai import responses as replies
from assistant.run.tools.search_slack import NO_TOKEN, REFUSALS
from context.channels import ChannelConfig
from tests.harness import answered_log, mention, prompt_log, seed, thread_of

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = [pytest.mark.app_backend, pytest.mark.listeners]

BOB = "U0BOB00001"
SECRET = "C0SECRET01"


def search_on(app, **fields) -> None:
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel=ids.CHANNEL_ID, slack_search=True, **fields)
    )


def asked(slack, text: str, token: str | None, **fields) -> dict:
    """A person's mention carrying Slack's action token, as Slack sends it."""
    extra = {"assistant_thread": {"action_token": token}} if token else {}
    return mention(slack, text, **extra, **fields)


def search(query: str, **filters) -> replies.Completion:
    return replies.tool_calls(("searchSlack", {"query": query, **filters, "reasoning": "look"}))


def answer(text: str) -> replies.Completion:
    return replies.tool_calls(
        ("postMessage", {"text": text, "reasoning": "answer"}),
        ("finishRequest", {"reasoning": "done"}),
    )


def tools_offered(request: dict) -> list[str]:
    return [tool["function"]["name"] for tool in request["tools"]]


def test_a_search_is_answered_with_permalinks_the_answer_cites(make_app, slack, model):
    app = make_app(assistant_trace="json")
    search_on(app)
    slack.add_user(BOB, "bob")
    found = slack.add_message(ids.CHANNEL_ID, user=BOB, text="The offsite is in Lisbon in May")
    ts = found["ts"].replace(".", "")
    permalink = f"https://{ids.TEAM_DOMAIN}.slack.com/archives/{ids.CHANNEL_ID}/p{ts}"
    token = slack.search.action_token(ids.USER_ID)
    model.script(search("Lisbon May"), answer(f"In Lisbon, in May ({permalink})."))

    event = asked(slack, "where is the offsite?", token)
    log = answered_log(app, slack, event)

    [call] = slack.calls_to("assistant.search.context")
    assert call.ok
    assert (call.params["action_token"], call.params["channel_types"]) == (token, "public_channel")
    assert call.params["query"] == "Lisbon May"
    assert log[2]["content"]["toolCall"] == "searchSlack"
    result = log[3]["content"]
    assert result.startswith("Slack search for 'Lisbon May' in public_channel: 1 message, ")
    assert f"<@{BOB}> in <#{ids.CHANNEL_ID}>: The offsite is in Lisbon in May ({permalink})" in (
        result
    )
    # The model read the result, and the answer it posted cites the permalink.
    assert "searchSlack" in tools_offered(model.requests[0])
    assert prompt_log(model.requests[1])[3]["content"] == result
    assert permalink in slack.calls_to("chat.postMessage")[-1].params["text"]
    # The token is kept for the run, never printed: not in the JSON trace, not in the export.
    assert app.assistant.store.metadata(thread_of(event))[1].action_token == token
    assert token not in app.trace.getvalue()


@pytest.mark.parametrize(
    ("refuse", "told"),
    [
        (lambda slack, token: slack.fail("assistant.search.context", "feature_not_enabled"),
         REFUSALS["feature_not_enabled"]),
        (lambda slack, token: slack.search.expire(token), REFUSALS["invalid_action_token"]),
        # More 429s than the client's bounded waits: Slack still says no.
        (lambda slack, token: slack.rate_limit("assistant.search.context", retry_after=1,
                                               times=4),
         REFUSALS["ratelimited"]),
        (lambda slack, token: slack.fail("assistant.search.context", "access_denied"),
         "Slack answered access_denied"),
    ],
    ids=["feature_not_enabled", "invalid_action_token", "ratelimited", "other"],
)  # fmt: skip
def test_a_refusal_is_told_to_the_model_and_the_run_goes_on(app, slack, model, refuse, told):
    search_on(app)
    token = slack.search.action_token(ids.USER_ID)
    refuse(slack, token)
    model.script(search("offsite"), answer("I could not search Slack just now."))

    log = answered_log(app, slack, asked(slack, "where is the offsite?", token))

    assert log[3]["content"] == (
        f"Error: searchSlack was not carried out: {told}. Answer without it."
    )
    assert prompt_log(model.requests[1])[3]["content"] == log[3]["content"]
    assert slack.calls_to("chat.postMessage")[-1].params["text"] == (
        "I could not search Slack just now."
    )
    assert log[-1]["content"]["toolCall"] == "finishRequest"


def test_a_message_without_an_action_token_gets_no_search(app, slack, model):
    search_on(app)
    model.script(search("offsite"), answer("No search."))
    log = answered_log(app, slack, asked(slack, "where is the offsite?", None))
    assert log[3]["content"] == NO_TOKEN
    assert slack.calls_to("assistant.search.context") == []


def test_with_search_off_the_tool_is_not_offered_nor_carried_out(app, slack, model):
    token = slack.search.action_token(ids.USER_ID)
    model.script(search("offsite"), answer("Fine."))
    log = answered_log(app, slack, asked(slack, "where is the offsite?", token))
    assert "searchSlack" not in tools_offered(model.requests[0])
    assert log[2]["content"].startswith("Error: unknown tool 'searchSlack'; the tools are ")
    assert slack.calls_to("assistant.search.context") == []
    # Turned on for the channel, then off again for it over an on workspace default: the
    # channel's own setting wins.
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel="*", slack_search=True)
    )
    search_on(app, search_channel_types=("public_channel",))
    model.script(answer("On."))
    answered_log(app, slack, asked(slack, "and now?", slack.search.action_token(ids.USER_ID)))
    assert "searchSlack" in tools_offered(model.requests[-1])
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel=ids.CHANNEL_ID, slack_search=False)
    )
    model.script(answer("Off."))
    answered_log(app, slack, asked(slack, "and now?", slack.search.action_token(ids.USER_ID)))
    assert "searchSlack" not in tools_offered(model.requests[-1])


def test_a_person_gets_nothing_from_a_channel_they_cannot_see(app, slack, model):
    slack.add_user(BOB, "bob")
    slack.conversations.private(SECRET, [BOB], name="secret")
    slack.add_message(SECRET, user=BOB, text="The offsite budget is 40k")
    search_on(app, search_channel_types=("public_channel", "private_channel"))
    alice = slack.search.action_token(ids.USER_ID)
    model.script(search("offsite budget"), answer("Nothing found."))

    log = answered_log(app, slack, asked(slack, "how much may we spend?", alice))

    [call] = slack.calls_to("assistant.search.context")
    assert call.params["channel_types"] == "public_channel,private_channel"
    assert log[3]["content"] == (
        "Slack search for 'offsite budget' in public_channel, private_channel: no messages."
    )
    # Bob, who is in the private channel, finds it with his own message's token.
    model.script(search("offsite budget"), answer("40k."))
    bob = slack.search.action_token(BOB)
    log = answered_log(app, slack, asked(slack, "how much, then?", bob, user=BOB))
    assert "<@U0BOB00001> in <#C0SECRET01>: The offsite budget is 40k" in log[-3]["content"]
    # The model may narrow the types, never widen them past the channel's.
    model.script(search("offsite", channel_types=["im"]), answer("Not there."))
    log = answered_log(app, slack, asked(slack, "in my DMs?", slack.search.action_token(BOB)))
    assert log[-3]["content"] == (
        "Error: searchSlack was not carried out: this channel allows searching only "
        "public_channel, private_channel."
    )


def test_the_deployment_default_turns_search_on_with_its_types(make_app, slack, model):
    app = make_app(
        assistant_slack_search=True, assistant_slack_search_channel_types="public_channel,im"
    )
    model.script(search("offsite"), answer("Searched."))
    answered_log(app, slack, asked(slack, "anything?", slack.search.action_token(ids.USER_ID)))
    assert "searchSlack" in tools_offered(model.requests[0])
    [call] = slack.calls_to("assistant.search.context")
    assert call.params["channel_types"] == "public_channel,im"


def test_a_dm_searches_as_its_author_in_their_own_dms(app, slack, model):
    """The Messages tab (a DM with the app): Slack's token comes with the DM's message event,
    and a workspace default allowing `im` finds the person's own DM with someone else."""
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel="*", slack_search=True,
                      search_channel_types=("im",))
    )  # fmt: skip
    slack.add_user(BOB, "bob")
    slack.conversations.im("D0ALICEBOB", ids.USER_ID, team=ids.TEAM_ID)
    slack.add_message("D0ALICEBOB", user=BOB, text="the gate code is 4711")
    token = slack.search.action_token(ids.USER_ID)
    model.script(search("gate code"), answer("4711."))
    message = seed(slack, events.dm("what was it?", assistant_thread={"action_token": token}))
    assert app.send_event(message).status == 200
    slack.wait_for_call("chat.postMessage")
    app.wait_idle()

    [call] = slack.calls_to("assistant.search.context")
    assert (call.params["action_token"], call.params["channel_types"]) == (token, "im")
    assert "<#D0ALICEBOB>: the gate code is 4711" in app.log(thread_of(message))[3]["content"]
