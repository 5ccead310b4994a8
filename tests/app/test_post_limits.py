"""What the model may post (issue: injected text makes the model flood a thread or ping
crowds): posts per reply and per run, characters per run, mentions per message, nothing
invisible; and every model call caps the answer's tokens. Through the real app and the fakes."""

from __future__ import annotations

import re

import pytest

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from assistant.model.request import answer_limit
from assistant.run.core.post_limits import CUT_NOTE
from assistant.run.loop.answer_so_far import NOT_FINISHED
from assistant.settings.environment import SettingsError, load_settings
from assistant.slack.text import split_message
from context.post_refusals import REFUSED
from context.toolcalls import PostMessage
from tests.app.test_durable_runs import bot_texts, crashed_after
from tests.app.test_model_failures import answered, script_one_answer
from tests.harness import mention as say
from tests.harness import thread_of

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

WJ = "\u2060"


def post(text: str) -> tuple[str, dict[str, str]]:
    return ("postMessage", {"text": text, "reasoning": "r"})


def posted(slack) -> list[str]:
    return [c.params["text"] for c in slack.calls_to("chat.postMessage") if c.ok]


def refusals(log: list[dict]) -> dict[int, str]:
    """Each refused postMessage entry's index, with why it was not posted."""
    found = {}
    for entry in log:
        match = re.fullmatch(
            r"Error: the postMessage of entry (\d+) was not posted: (.*)\.", str(entry["content"])
        )
        if match and entry["role"] == "system":
            call = log[int(match[1])]
            assert call["content"]["toolCall"] == "postMessage"  # the call stays on record
            found[int(match[1])] = match[2]
    return found


def post_calls(log: list[dict]) -> list[dict]:
    return [e for e in log if e["role"] == "assistant" and "text" in e["content"]]


def test_a_reply_with_200_posts_posts_three_and_says_why_not_the_rest(app, slack, model):
    model.script(
        replies.tool_calls(*[post(f"spam {i}") for i in range(200)]), replies.finish_request()
    )
    log = answered(app, slack, "what's new?")

    assert posted(slack) == ["spam 0", "spam 1", "spam 2"]
    calls = post_calls(log)
    assert len(calls) == 10  # the calls within ASSISTANT_MAX_TOOL_CALLS_PER_REPLY
    refused = refusals(log)
    assert sorted(refused) == [call["index"] for call in calls[3:10]]
    assert set(refused.values()) == {
        "this reply already posted 3 times, the most one reply may (ASSISTANT_MAX_POSTS_PER_REPLY)"
    }
    # Each refusal follows its call, before the next call is carried out.
    for call in calls[3:]:
        index = call["index"]
        assert log[index + 1]["content"].startswith(f"Error: the postMessage of entry {index} ")
    # Past ASSISTANT_MAX_TOOL_CALLS_PER_REPLY (10) calls, none is carried out or recorded:
    # one entry says how many, as the reply ends.
    assert log[calls[-1]["index"] + 2]["content"] == (
        "Error: 190 more tool calls of this reply (190 postMessage) were not carried out or "
        "recorded: this reply already made 10 tool calls, the most one reply may "
        "(ASSISTANT_MAX_TOOL_CALLS_PER_REPLY)."
    )
    assert log[-1]["content"]["toolCall"] == "finishRequest"


def test_a_run_posts_at_most_its_characters_and_a_1_mb_text_not_at_all(app, slack, model):
    huge = "flood " * 175_000  # 1 MB
    long = "\n\n".join(f"Paragraph {i}. " + "word " * 190 for i in range(40))[:30_000]
    model.script(
        replies.tool_calls(post(long), post(long.upper()), post(huge)), replies.finish_request()
    )
    log = answered(app, slack, "tell me everything")

    texts = posted(slack)
    assert sum(len(t) for t in texts) <= 40_000
    _, upper_call, huge_call = post_calls(log)
    # The first is posted whole, in as many messages as it takes; the second only as far as
    # the cap leaves room (see tests/app/test_answer_caps.py), so nothing is left for the third.
    assert texts[: len(split_message(long))] == split_message(long)
    assert texts[-1].endswith(CUT_NOTE)
    assert log[upper_call["index"] + 1]["content"].startswith(
        f"The postMessage of entry {upper_call['index']} is posted cut to its first "
    )
    assert refusals(log) == {
        huge_call["index"]: "its 1,050,000 characters are more than the 0 this answer may "
        "still post of its 40,000 (ASSISTANT_MAX_POST_CHARS_PER_RUN)",
    }
    assert huge_call["content"]["text"] == huge  # recorded whole all the same


def test_a_run_over_several_replies_stops_at_its_message_cap(app, slack, model):
    model.script(
        *[replies.tool_calls(*[post(f"reply {r} post {p}") for p in range(3)]) for r in range(4)],
        replies.finish_request(),
    )
    event = say(slack, "go on")
    assert app.send_event(event).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    log = app.log(thread_of(event))

    assert len(posted(slack)) == 10
    assert posted(slack)[-1] == "reply 3 post 0"
    calls = post_calls(log)
    why = "it would take 1 Slack message and this answer has 0 left of its 10"
    assert refusals(log) == {
        call["index"]: f"{why} (ASSISTANT_MAX_MESSAGES_PER_RUN)" for call in calls[10:]
    }

    # The cap is per run: the next mention in the thread is answered again.
    script_one_answer(model)
    follow_up = say(slack, "and now?", thread_ts=event["ts"])
    assert app.send_event(follow_up).status == 200
    slack.wait_for_call("reactions.remove", count=2)
    app.wait_idle()
    assert posted(slack)[-1] == "Here you go"


def test_each_slack_message_of_a_long_text_counts_against_the_run(make_app, slack, model):
    app = make_app(assistant_max_messages_per_run=4, assistant_max_post_chars_per_run=100_000)
    three_parts = "\n\n".join(f"Part {i}. " + "x" * 9_000 for i in range(3))
    two_parts = "\n\n".join(f"More {i}. " + "y" * 9_000 for i in range(2))
    model.script(
        replies.tool_calls(post(three_parts), post(two_parts), post("short")),
        replies.finish_request(),
    )
    log = answered(app, slack, "the whole report")

    # The two-part text is cut to the one message left, and the answer ends there.
    assert [t[:6] for t in posted(slack)] == ["Part 0", "Part 1", "Part 2", "More 0"]
    assert posted(slack)[-1].endswith(CUT_NOTE)
    assert log[4]["content"].endswith(
        ": it would take 2 Slack messages and this answer has 1 left of its 4 "
        "(ASSISTANT_MAX_MESSAGES_PER_RUN)."
    )
    (refused,) = refusals(log).values()
    assert refused.startswith("its 5 characters are more than the 0 this answer may still post")


def test_every_model_call_caps_the_answers_tokens(make_app, slack, model):
    app = make_app(assistant_answer_tokens=1234)
    script_one_answer(model)
    answered(app, slack, "hello")
    assert len(model.requests) == 2
    for request in model.requests:
        assert request["max_tokens"] == 1234
        assert "max_completion_tokens" not in request


@pytest.mark.parametrize("name", ["o3-mini", "o1", "gpt-5-mini", "openai/o4-mini"])
def test_reasoning_models_get_max_completion_tokens_instead(make_app, slack, model, name):
    app = make_app(assistant_model=name)
    script_one_answer(model)
    answered(app, slack, "hello")
    for request in model.requests:
        assert request["max_completion_tokens"] == 4000
        assert "max_tokens" not in request


@pytest.mark.parametrize(
    ("name", "argument"),
    [
        ("gpt-4o-mini", "max_tokens"),
        ("llama3.1", "max_tokens"),
        ("gpt-oss:20b", "max_tokens"),
        ("omni-model", "max_tokens"),
        ("O3", "max_completion_tokens"),
        ("gpt-5.1", "max_completion_tokens"),
        ("ft:o4-mini:acme::x1", "max_completion_tokens"),
    ],
)
def test_which_argument_caps_the_answer(name, argument):
    assert answer_limit(name, 900) == {argument: 900}


def test_user_groups_and_crowds_of_people_come_out_unable_to_ping(app, slack, model):
    people = [f"U0PERSON{i:02d}" for i in range(20)]
    text = "Heads up <!subteam^S0DEVS0001|@devs> and <!subteam^S0OPS00001>, <!here>: " + " ".join(
        f"<@{p}>" for p in people
    )
    model.script(replies.tool_calls(post(text)), replies.finish_request())
    answered(app, slack, "who should know?")

    (call,) = slack.calls_to("chat.postMessage")
    for received in (call.params["text"], call.params["blocks"][0]["text"]):
        assert "<!" not in received
        assert received.startswith(f"Heads up @{WJ}devs and @{WJ}S0OPS00001, @{WJ}here: ")
        assert re.findall(r"<@(\w+)>", received) == people[:5]
        assert [f"@{WJ}{p}" for p in people[5:]] == received.split(" ")[-15:]


@pytest.mark.parametrize(
    "text", ["\u200b", " \u200b\u200c\u200d\u2060\ufeff \n\t", "\u3164\u2800"], ids=repr
)
def test_a_text_with_nothing_visible_is_not_posted(app, slack, model, text):
    model.script(replies.tool_calls(post(text), post("Here it is.")), replies.finish_request())
    log = answered(app, slack, "hello")

    assert posted(slack) == ["Here it is."]
    assert list(refusals(log).values()) == ["its text is only whitespace or invisible characters"]


def test_a_refused_post_is_never_posted_by_a_resumed_run(make_app, slack, model, app_stores):
    refusal = REFUSED.format(index=2, why="this reply already posted 3 times, the most …")
    key = crashed_after(app_stores[0], slack, PostMessage(text="spam"), refusal)
    # Nothing of the answer reached the person: its first finishRequest is refused once.
    model.script(replies.finish_request(), replies.finish_request())
    app = make_app()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    assert slack.calls_to("chat.postMessage") == []
    assert bot_texts(slack, key) == []
    assert [e["content"] for e in app.log(key)[3:-1]] == [refusal, NOT_FINISHED]


def test_a_post_the_crash_left_undecided_is_decided_by_the_resumed_run(
    make_app, slack, model, app_stores
):
    key = crashed_after(app_stores[0], slack, PostMessage(text="\u200b\u2060"))
    model.script(replies.finish_request(), replies.finish_request())  # the first is refused
    app = make_app()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    assert slack.calls_to("chat.postMessage") == []
    log = app.log(key)
    assert list(refusals(log)) == [2]
    assert log[-1]["content"]["toolCall"] == "finishRequest"


def test_caps_are_settings_checked_at_start():
    with pytest.raises(SettingsError) as error:
        load_settings(
            "replay",
            _env_file=None,
            openai_api_key=ids.OPENAI_API_KEY,
            assistant_max_posts_per_reply=0,
            assistant_max_messages_per_run="many",
            assistant_max_post_chars_per_run=10,
            assistant_max_mentions_per_message=-1,
        )
    named = {line.split(":")[0] for line in str(error.value).splitlines()}
    assert named == {
        "ASSISTANT_MAX_POSTS_PER_REPLY",
        "ASSISTANT_MAX_MESSAGES_PER_RUN",
        "ASSISTANT_MAX_POST_CHARS_PER_RUN",
        "ASSISTANT_MAX_MENTIONS_PER_MESSAGE",
    }
