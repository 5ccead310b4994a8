"""searchSlack end to end (docs/slack-features.md, "Searching Slack"): offered only where
a channel turns Slack search on; `assistant.search.context` asked as the person being answered
(the token of their own message, never another person's the run also answers) and only in the
channel's conversation types, private ones only in that person's own DM with the app; results
with permalinks, which the answer cites; each refusal of Slack's told to the model while the run
goes on; a person never gets what they may not read, nor shows it to others; the token never
printed."""

from __future__ import annotations

import pytest

from assistant.fakes import ids
from assistant.fakes.events import builders as events
from assistant.fakes.openai import responses as replies
from assistant.run.tools.search_slack import NO_TOKEN, REFUSALS, SHARED
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
    assert log[3]["content"] == NO_TOKEN.format(user=f"<@{ids.USER_ID}>")
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


def in_dm(app, slack, user: str, text: str, token: str) -> list[dict]:
    """`user` writes to the app in their own DM (the Messages tab); the thread's log once
    answered."""
    channel = f"D0{user[2:]}"
    slack.conversations.im(channel, user)
    message = seed(
        slack,
        events.dm(text, user=user, channel=channel, assistant_thread={"action_token": token}),
    )
    posts = len(slack.calls_to("chat.postMessage"))
    assert app.send_event(message).status == 200
    slack.wait_for_call("chat.postMessage", count=posts + 1)
    app.wait_idle()
    return app.log(thread_of(message))


def test_a_person_gets_nothing_from_a_channel_they_cannot_see(app, slack, model):
    slack.add_user(BOB, "bob")
    slack.conversations.private(SECRET, [BOB], name="secret")
    slack.add_message(SECRET, user=BOB, text="The offsite budget is 40k")
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel="*", slack_search=True,
                      search_channel_types=("public_channel", "private_channel"))
    )  # fmt: skip
    alice = slack.search.action_token(ids.USER_ID)
    model.script(search("offsite budget"), answer("Nothing found."))

    log = in_dm(app, slack, ids.USER_ID, "how much may we spend?", alice)

    [call] = slack.calls_to("assistant.search.context")
    assert call.params["channel_types"] == "public_channel,private_channel"
    assert log[3]["content"] == (
        "Slack search for 'offsite budget' in public_channel, private_channel: no messages."
    )
    # Bob, who is in the private channel, finds it with his own message's token, in his DM.
    model.script(search("offsite budget"), answer("40k."))
    log = in_dm(app, slack, BOB, "how much, then?", slack.search.action_token(BOB))
    assert "<@U0BOB00001> in <#C0SECRET01>: The offsite budget is 40k" in log[3]["content"]
    # The model may narrow the types, never widen them past the settings'.
    model.script(search("offsite", channel_types=["im"]), answer("Not there."))
    log = in_dm(app, slack, BOB, "in my DMs?", slack.search.action_token(BOB))
    assert log[3]["content"] == (
        "Error: searchSlack was not carried out: this channel allows searching only "
        "public_channel, private_channel."
    )


def test_a_channel_thread_searches_public_channels_alone_whatever_its_settings(app, slack, model):
    """What is found is posted where others read it: private channels, group DMs and DMs
    are searched only in the asker's own DM with the app."""
    slack.add_user(BOB, "bob")
    slack.conversations.private(SECRET, [ids.USER_ID], name="secret")
    slack.add_message(SECRET, user=ids.USER_ID, text="The offsite budget is 40k")
    search_on(app, search_channel_types=("public_channel", "private_channel", "mpim", "im"))
    model.script(search("offsite budget"), answer("Nothing I may show here."))

    event = asked(slack, "how much may we spend?", slack.search.action_token(ids.USER_ID))
    log = answered_log(app, slack, event)

    [call] = slack.calls_to("assistant.search.context")
    assert call.params["channel_types"] == "public_channel"
    assert log[3]["content"] == "Slack search for 'offsite budget' in public_channel: no messages."
    # Asked for the private ones by name: refused, and why.
    model.script(search("offsite budget", channel_types=["private_channel", "im"]),
                 answer("Not here."))  # fmt: skip
    token = slack.search.action_token(ids.USER_ID)
    log = answered_log(app, slack, asked(slack, "and the private ones?", token))
    assert log[3]["content"] == SHARED.format(types="private_channel, im")
    assert len(slack.calls_to("assistant.search.context")) == 1
    # A channel whose settings allow private conversations alone offers no search at all.
    search_on(app, search_channel_types=("private_channel",))
    model.script(answer("No search."))
    token = slack.search.action_token(ids.USER_ID)
    answered_log(app, slack, asked(slack, "anything?", token))
    assert "searchSlack" not in tools_offered(model.requests[-1])


def test_a_dm_that_is_not_the_asker_s_own_searches_public_channels_alone(app, slack, model):
    """A DM the app cannot tell is the asker's own (Slack will not describe it, or it is
    another person's) is taken as read by others."""
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel="*", slack_search=True,
                      search_channel_types=("public_channel", "im"))
    )  # fmt: skip
    token = slack.search.action_token(ids.USER_ID)
    model.script(search("gate code"), answer("Nothing."))
    # Never declared to the fake: conversations.info answers channel_not_found.
    message = seed(slack, events.dm("what was it?", channel="D0UNKNOWN1",
                                    assistant_thread={"action_token": token}))  # fmt: skip
    assert app.send_event(message).status == 200
    slack.wait_for_call("chat.postMessage")
    app.wait_idle()
    [call] = slack.calls_to("assistant.search.context")
    assert call.params["channel_types"] == "public_channel"
    # Bob's DM with the app, where Alice's message cannot be: the same.
    slack.add_user(BOB, "bob")
    slack.conversations.im("D0BOBSDM01", BOB)
    model.script(search("gate code"), answer("Nothing."))
    token = slack.search.action_token(ids.USER_ID)
    message = seed(slack, events.dm("what was it?", channel="D0BOBSDM01",
                                    assistant_thread={"action_token": token}))  # fmt: skip
    assert app.send_event(message).status == 200
    slack.wait_for_call("chat.postMessage", count=2)
    app.wait_idle()
    assert slack.calls_to("assistant.search.context")[-1].params["channel_types"] == (
        "public_channel"
    )


def test_the_deployment_default_turns_search_on_with_its_types(make_app, slack, model):
    app = make_app(
        assistant_slack_search=True, assistant_slack_search_channel_types="public_channel,im"
    )
    model.script(search("offsite"), answer("Searched."))
    in_dm(app, slack, ids.USER_ID, "anything?", slack.search.action_token(ids.USER_ID))
    assert "searchSlack" in tools_offered(model.requests[0])
    [call] = slack.calls_to("assistant.search.context")
    assert call.params["channel_types"] == "public_channel,im"
    # In a channel's thread, public channels alone.
    model.script(search("offsite"), answer("Searched."))
    answered_log(app, slack, asked(slack, "anything?", slack.search.action_token(ids.USER_ID)))
    assert slack.calls_to("assistant.search.context")[-1].params["channel_types"] == (
        "public_channel"
    )


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


def test_each_step_searches_as_the_person_it_answers(app, slack, model):
    """Alice asks; Bob asks in her thread while the run is at its first model call. The
    step whose prompt showed Alice's message alone searches as her; the steps after Bob's
    message was seen (the newest owed) search as him, with his own token."""
    search_on(app)
    slack.add_user(BOB, "bob")
    alice, bob = slack.search.action_token(ids.USER_ID), slack.search.action_token(BOB)
    first = replies.hold(search("offsite"))
    model.script(first, search("budget"), answer("Lisbon, and 40k."))

    event = asked(slack, "where is the offsite?", alice)
    assert app.send_event(event).status == 200
    first.wait_reached()
    later = asked(slack, "and the budget?", bob, user=BOB, thread_ts=event["ts"])
    assert app.send_event(later).status == 200
    first.release()
    slack.wait_for_call("chat.postMessage")
    app.wait_idle()

    calls = slack.calls_to("assistant.search.context")
    assert [(c.params["query"], c.params["action_token"]) for c in calls] == [
        ("offsite", alice),
        ("budget", bob),
    ]


def test_a_person_whose_message_has_no_token_is_never_searched_as_another(app, slack, model):
    """Bob's message came without Slack's token: a step answering him does not search, not
    even with the token of Alice's, which the same run answers."""
    search_on(app)
    slack.add_user(BOB, "bob")
    alice = slack.search.action_token(ids.USER_ID)
    first = replies.hold(replies.tool_calls(
        ("postMessage", {"text": "Lisbon.", "reasoning": "answer Alice"})
    ))  # fmt: skip
    model.script(first, search("budget"), answer("I cannot search for you, Bob."))

    event = asked(slack, "where is the offsite?", alice)
    assert app.send_event(event).status == 200
    first.wait_reached()
    later = asked(slack, "and the budget?", None, user=BOB, thread_ts=event["ts"])
    assert app.send_event(later).status == 200
    first.release()
    slack.wait_for_call("chat.postMessage", count=2)
    app.wait_idle()

    log = app.log(thread_of(event))
    assert slack.calls_to("assistant.search.context") == []
    searched = next(e["index"] for e in log if e["content"] == NO_TOKEN.format(user=f"<@{BOB}>"))
    assert log[searched - 1]["content"]["toolCall"] == "searchSlack"
