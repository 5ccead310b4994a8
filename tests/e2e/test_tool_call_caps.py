"""How much one model reply may do (issue 32): a reply of 300 `expandEntry` calls carries out
the first ASSISTANT_MAX_TOOL_CALLS_PER_REPLY and records the others as refused, as posts past
their cap are; and a streamed run's task cards stay within what one Slack message holds.
Through the real app and the fakes."""

from __future__ import annotations

import re

import pytest

from assistant.fakes.openai import responses as replies
from assistant.run.progress.step_cards import MAX_CARDS
from tests.e2e.test_model_failures import answered
from tests.e2e.test_steps import HISTORY, cards
from tests.e2e.test_streaming import FINISH, answer, bot_messages, post
from tests.harness import mention as say
from tests.harness import prompt_log

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = [pytest.mark.app_backend, pytest.mark.listeners]

REFUSED = re.compile(r"Error: the (\w+) of entry (\d+) was not carried out: (.*)\.")


def expand(index: int) -> tuple[str, dict[str, object]]:
    return ("expandEntry", {"index": index, "reasoning": "read it all"})


def test_a_reply_of_300_calls_carries_out_ten_and_records_why_not_the_rest(app, slack, model):
    model.script(
        replies.tool_calls(*[expand(1) for _ in range(300)]),
        replies.tool_calls(post("Read it."), FINISH),
    )
    long = "a long message worth reading in full. " * 1_000
    log = answered(app, slack, long)

    calls = [
        e for e in log if e["role"] == "assistant" and e["content"]["toolCall"] == "expandEntry"
    ]
    assert len(calls) == 300  # every call the model made is on record
    results = [e for e in log if str(e["content"]).startswith("Entry 1 in full:")]
    assert len(results) == 10
    refused = {}
    for entry in log:
        match = REFUSED.fullmatch(str(entry["content"]))
        if match:
            assert log[int(match[2])]["content"]["toolCall"] == match[1] == "expandEntry"
            refused[int(match[2])] = match[3]
    assert sorted(refused) == [call["index"] for call in calls[10:]]
    assert set(refused.values()) == {
        "this reply already made 10 tool calls, the most one reply may "
        "(ASSISTANT_MAX_TOOL_CALLS_PER_REPLY)"
    }
    # The next prompt holds ten copies of the entry, not three hundred.
    second = model.requests[1]["messages"][1]["content"]
    assert len(second) < 20 * len(long), len(second)
    assert (
        sum(str(e["content"]).startswith("Entry 1 in full:") for e in prompt_log(model.requests[1]))
        <= 10
    )
    assert log[-1]["content"]["toolCall"] == "finishRequest"
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == ["Read it."]


def test_finish_request_past_the_cap_still_ends_the_answer(make_app, slack, model):
    app = make_app(assistant_max_tool_calls_per_reply=2)
    model.script(replies.tool_calls(expand(1), post("Here."), post("And more."), FINISH))
    log = answered(app, slack, "hi")

    assert [m.params["text"] for m in slack.calls_to("chat.postMessage") if m.ok] == ["Here."]
    assert REFUSED.fullmatch(log[-2]["content"])[1] == "postMessage"
    assert log[-1]["content"]["toolCall"] == "finishRequest"  # carried out: the run ended


def test_a_streamed_message_shows_at_most_max_cards_task_cards(make_app, slack, model):
    app = make_app(assistant_stream="auto", assistant_max_steps=8)
    steps = MAX_CARDS // 10 + 2  # replies of ten reads each: more cards than one message holds
    model.script(
        *[replies.tool_calls(*[HISTORY] * 10) for _ in range(steps)],
        replies.tool_calls(post("Done."), FINISH),
    )
    event = say(slack, "what did we decide?")
    answer(app, slack, event)

    shown = {
        card_id
        for message in bot_messages(slack, event)
        for card_id, *_ in cards(slack, message["ts"])
    }
    per_message = [
        len({card_id for card_id, *_ in cards(slack, message["ts"])})
        for message in bot_messages(slack, event)
    ]
    assert max(per_message) == MAX_CARDS, per_message
    assert len(shown) == MAX_CARDS
    assert all(call.ok for call in slack.calls if call.method.startswith("chat."))
