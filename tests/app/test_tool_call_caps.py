"""How much one model reply may do (issue 32): a reply of 300 `expandEntry` calls carries out
the first ASSISTANT_MAX_TOOL_CALLS_PER_REPLY, and the others are one entry that says how many
were not carried out (issue 43, point 16: one entry each made the next prompt 14 times the
first); and a streamed run's task cards stay within what one Slack message holds. Through the
real app and the fakes."""

from __future__ import annotations

import pytest

from assistant.fakes.openai import responses as replies
from assistant.run.progress.step_cards import MAX_CARDS
from tests.app.test_model_failures import answered
from tests.app.test_steps import HISTORY, cards
from tests.app.test_streaming import FINISH, answer, bot_messages, post
from tests.harness import mention as say

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = [pytest.mark.app_backend, pytest.mark.listeners]

SKIPPED = (
    "Error: {n} more tool calls of this reply ({tools}) were not carried out or recorded: this "
    "reply already made {cap} tool calls, the most one reply may "
    "(ASSISTANT_MAX_TOOL_CALLS_PER_REPLY)."
)


def expand(index: int) -> tuple[str, dict[str, object]]:
    return ("expandEntry", {"index": index, "reasoning": "read it all"})


def test_a_reply_of_300_calls_carries_out_ten_and_records_the_rest_as_one_entry(app, slack, model):
    model.script(
        replies.tool_calls(*[expand(1) for _ in range(300)]),
        replies.tool_calls(post("Read it."), FINISH),
    )
    long = "a long message worth reading in full. " * 1_000
    log = answered(app, slack, long)

    calls = [
        e for e in log if e["role"] == "assistant" and e["content"]["toolCall"] == "expandEntry"
    ]
    assert len(calls) == 10  # the ones carried out, each with its result
    results = [e for e in log if str(e["content"]).startswith("Entry 1 in full:")]
    assert len(results) == 10
    skipped = SKIPPED.format(n=290, tools="290 expandEntry", cap=10)
    assert [e["content"] for e in log].count(skipped) == 1
    assert log[results[-1]["index"] + 1]["content"] == skipped  # as the reply ends
    # The persona, the question, 10 calls, 10 results, the note; the answer's post and finish.
    assert len(log) == 2 + 10 + 10 + 1 + 2
    # The next prompt holds ten copies of the entry and one line for the rest.
    first, second = (r["messages"][1]["content"] for r in model.requests[:2])
    assert len(second) < 12 * len(first), (len(first), len(second))
    assert log[-1]["content"]["toolCall"] == "finishRequest"
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == ["Read it."]


def test_finish_request_past_the_cap_still_ends_the_answer(make_app, slack, model):
    app = make_app(assistant_max_tool_calls_per_reply=2)
    model.script(
        replies.tool_calls(expand(1), post("Here."), post("And more."), ("nope", {}), FINISH)
    )
    log = answered(app, slack, "hi")

    assert [m.params["text"] for m in slack.calls_to("chat.postMessage") if m.ok] == ["Here."]
    # Before the entry that ends the run: what was not carried out, a tool not offered too.
    assert log[-2]["content"] == (
        "Error: 2 more tool calls of this reply (1 postMessage, 1 of no tool offered) were not "
        "carried out or recorded: this reply already made 2 tool calls, the most one reply may "
        "(ASSISTANT_MAX_TOOL_CALLS_PER_REPLY)."
    )
    assert log[-1]["content"]["toolCall"] == "finishRequest"  # carried out: the run ended


def test_a_streamed_reply_past_the_cap_records_one_entry_for_the_rest(make_app, slack, model):
    app = make_app(assistant_stream="auto", assistant_max_tool_calls_per_reply=2)
    model.script(replies.tool_calls(*[HISTORY] * 5), replies.tool_calls(post("Done."), FINISH))
    log = answered(app, slack, "what did we decide?")

    histories = [
        e
        for e in log
        if e["role"] == "assistant" and e["content"]["toolCall"] == "getThreadHistory"
    ]
    assert len(histories) == 2
    assert [e["content"] for e in log].count(
        "Error: 3 more tool calls of this reply (3 getThreadHistory) were not carried out or "
        "recorded: this reply already made 2 tool calls, the most one reply may "
        "(ASSISTANT_MAX_TOOL_CALLS_PER_REPLY)."
    ) == 1
    assert log[-1]["content"]["toolCall"] == "finishRequest"


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
