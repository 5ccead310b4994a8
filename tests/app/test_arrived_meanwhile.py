"""A message that arrives while an answer is being written is answered (issue 21, point 4).

The postMessage entry is recorded when its call is complete, after a follow-up sent while the
answer streamed: the log's order alone says the answer follows the follow-up. A system entry
right after the answer names such messages, saying it does not answer them. The fake model
here decides from the log's order as a real one does: it answers the newest user entry that
no postMessage follows (or that such an entry names as not answered), and otherwise finishes.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from assistant.fakes.openai import responses as replies
from tests.app.test_streaming import ANSWER, FINISH, bot_messages, held_after, post
from tests.harness import mention as say
from tests.harness import prompt_log, thread_of

# How events are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

NOT_ANSWERED = re.compile(r"The messages? of entr(?:y|ies) ([\d, and]+) arrived while")


def unanswered(log: list[dict[str, Any]]) -> list[int]:
    """The user entries of the log that no answer follows, read in the log's order."""
    waiting: list[int] = []
    for entry in log:
        content = entry["content"]
        if entry["role"] == "user":
            waiting.append(entry["index"])
        elif entry["role"] == "assistant" and content.get("toolCall") == "postMessage":
            waiting = []
        elif entry["role"] == "system" and (found := NOT_ANSWERED.match(content)):
            waiting += [int(n) for n in re.findall(r"\d+", found.group(1))]
    return waiting


def a_model_that_reads_the_order(request: dict[str, Any]) -> replies.Completion:
    waiting = unanswered(prompt_log(request))
    if not waiting:
        return replies.tool_calls(FINISH)
    return replies.tool_calls(post(f"About entry {waiting[-1]}: yes."), FINISH)


def test_a_follow_up_sent_while_the_answer_streams_gets_its_own_answer(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    gate, first = held_after(25, replies.tool_calls(post(ANSWER), FINISH))
    model.script(first)
    model.default = a_model_that_reads_the_order
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    gate.wait_reached()
    slack.wait_for_call("chat.startStream")  # the person reads the answer being written...
    follow_up = say(slack, "and is it open on Sundays?", thread_ts=event["ts"])
    assert app.send_event(follow_up).status == 200  # ...and asks more (recorded: entry 2)
    gate.release()
    app.wait_idle()

    log = app.log(thread_of(event))
    assert [m["text"] for m in bot_messages(slack, event)] == [ANSWER, "About entry 2: yes."]
    assert log[2]["content"]["text"].endswith("open on Sundays?")
    assert log[3]["content"]["text"] == ANSWER  # recorded after the follow-up...
    assert log[4]["content"] == (  # ...and the log says so, right after it
        "The message of entry 2 arrived while this answer (entry 3) was being written, so "
        "entry 3 does not answer it."
    )
    assert log[5]["content"]["toolCall"] == "finishRequest"
    assert log[6]["content"]["text"] == "About entry 2: yes."
    assert app.assistant.store.pending(thread_of(event)) == []


def test_the_model_that_reads_the_order_finishes_once_each_message_is_answered():
    log = [
        {"index": 1, "role": "user", "content": {"text": "q"}},
        {"index": 2, "role": "assistant", "content": {"toolCall": "postMessage", "text": "a"}},
    ]
    assert unanswered(log) == []
    log.append({"index": 3, "role": "system", "content": "The messages of entries 4 and 5 "
                "arrived while this answer (entry 6) was being written, so ..."})  # fmt: skip
    assert unanswered(log) == [4, 5]
