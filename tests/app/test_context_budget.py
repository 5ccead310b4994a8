"""End to end through the fake model: a thread that outgrows the context budget keeps working,
every prompt fits, and expandEntry brings back a cut entry in full (issue: context budget)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assistant.fakes.openai import responses as replies
from assistant.model.instructions import SYSTEM_MESSAGE
from assistant.model.tool_calls import TOOL_SCHEMAS
from context.prompt_pieces import MARKER
from tests.harness import mention as say
from tests.harness import prompt_log, thread_of

# How events are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

CONTEXT_TOKENS, ANSWER_TOKENS = 16_000, 500
QUESTIONS = 30  # enough to outgrow the budget before the paste


def paste(chars: int) -> str:
    lines = (f"{n:05d} ERROR billing-api: relation invoices_{n} exists\n" for n in range(999))
    return "here is the whole log:\n" + "".join(lines)[:chars]


def answer(text: str) -> Any:
    return replies.tool_calls(
        ("postMessage", {"text": text, "reasoning": "answer"}),
        ("finishRequest", {"reasoning": "done"}),
    )


def test_a_thread_past_the_budget_keeps_working_and_expand_entry_brings_text_back(
    make_app, slack, model
):
    app = make_app(assistant_context_tokens=CONTEXT_TOKENS, assistant_answer_tokens=ANSWER_TOKENS)
    budget = app.settings.model.prompt_budget()
    filler = "Could you look at the deploy of the billing service again, please? " * 40
    first = say(slack, "question 0: " + filler)
    key = thread_of(first)
    big = paste(30_000)
    model.script(*(answer(f"answer {n}") for n in range(QUESTIONS)))
    app.send_event(first)
    app.wait_handled()
    for n in range(1, QUESTIONS):
        app.send_event(say(slack, f"question {n}: " + filler, thread_ts=first["ts"]))
        app.wait_handled()
    before_paste = len(model.requests)
    paste_index = len(app.log(key))  # the next entry: the paste's user entry
    model.script(
        replies.tool_calls(("expandEntry", {"index": paste_index, "reasoning": "read it all"})),
        answer("Found it: invoices_4 already exists."),
        answer("You're welcome."),
    )
    app.send_event(say(slack, big, thread_ts=first["ts"]))
    app.wait_handled()
    app.send_event(say(slack, "thanks!", thread_ts=first["ts"]))
    app.wait_handled()

    requests = model.requests
    assert len(requests) == before_paste + 3
    fixed = budget.counter.count(SYSTEM_MESSAGE) + budget.counter.count(
        json.dumps(TOOL_SCHEMAS, ensure_ascii=False, separators=(",", ":"))
    )
    for request in requests:  # every prompt within the budget, as the app's counter counts
        assert request["messages"][0]["content"] == SYSTEM_MESSAGE
        assert budget.counter.count(request["messages"][1]["content"]) <= budget.tokens
        assert budget.tokens + fixed < CONTEXT_TOKENS - ANSWER_TOKENS

    # The thread outgrew the budget before the paste: the oldest entries are left out, entry
    # 0 stays, and the note in their place says how to bring them back.
    shown = prompt_log(requests[before_paste - 1])
    assert shown[0]["index"] == 0 and "omitted" in shown[1]
    assert "getThreadHistory" in shown[1]["note"] and "expandEntry" in shown[1]["note"]

    # The paste is cut in the prompt, with a marker naming expandEntry for its index...
    asked = prompt_log(requests[before_paste])
    cut = next(item for item in asked if item.get("index") == paste_index)
    assert len(cut["content"]["text"]) < 2_500 < len(big)
    marker = MARKER.format(len(big) - cut["content"]["text"].index("\n[…"), paste_index)
    assert cut["content"]["text"].endswith(marker)
    # ... the model calls expandEntry, and the next prompt carries the full text.
    expanded = prompt_log(requests[before_paste + 1])
    call, result = expanded[-2], expanded[-1]
    assert call["content"]["toolCall"] == "expandEntry" and call["index"] == paste_index + 1
    assert result == {**result, "role": "system", "index": paste_index + 2}
    assert result["content"] == f"Entry {paste_index} in full:\n{big}"

    # The log itself keeps every text whole, and the thread is answered each time.
    log = app.log(key)
    assert log[paste_index]["content"]["text"] == big
    assert log[paste_index + 2]["content"] == f"Entry {paste_index} in full:\n{big}"
    posts = [call.params["text"] for call in slack.calls_to("chat.postMessage")]
    assert posts[-2:] == ["Found it: invoices_4 already exists.", "You're welcome."]
    assert len(posts) == QUESTIONS + 2
    # Next run: the expansion is an old entry again, shortened like any other.
    last = prompt_log(requests[-1])
    old = next(item for item in last if item.get("index") == paste_index + 2)
    assert "expandEntry(index=" in old["content"] and len(old["content"]) < 2_500
