"""Acks before runs, one run per thread at a time, threads side by side (architecture: runs)."""

from __future__ import annotations

import pytest

from assistant.fakes.openai import responses as replies
from tests.harness import mention as say
from tests.harness import prompt_log, thread_of

# How events are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners


def post(text: str) -> replies.Completion:
    return replies.tool_calls(("postMessage", {"text": text, "reasoning": "answer"}))


def users(log: list[dict]) -> list[str]:
    return [e["content"]["text"] for e in log if e["role"] == "user"]


def what(entry: dict) -> tuple[str, str]:
    """An entry in short: its role, and the user's text or the tool called."""
    content = entry["content"]
    if entry["role"] == "system":
        return "system", ""
    return entry["role"], content.get("text") if entry["role"] == "user" else content["toolCall"]


def assert_contiguous(log: list[dict]) -> None:
    assert [e["index"] for e in log] == list(range(len(log)))


def test_the_event_is_acknowledged_before_the_model_answers(app, slack, model):
    held = replies.hold(post("Done thinking."))
    model.script(held, replies.finish_request())
    mention = say(slack, "think hard")

    assert app.send_event(mention).status == 200  # while the model has not answered
    held.wait_reached()
    assert slack.calls_to("chat.postMessage") == []

    held.release()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == ["Done thinking."]
    assert len(app.log(thread_of(mention))) == 4


def test_a_mention_during_a_run_is_seen_by_its_next_step_not_by_a_second_run(app, slack, model):
    held = replies.hold(post("Answer one."))
    model.script(held, post("Answer two."), replies.finish_request())
    first = say(slack, "first")
    app.send_event(first)
    held.wait_reached()

    second = say(slack, "second", thread_ts=first["ts"])
    app.send_event(second)
    app.wait_listeners()  # the second mention is recorded, while the run waits on the model
    key = thread_of(first)
    assert users(app.log(key)) == ["first", "second"]

    held.release()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    log = app.log(key)
    assert_contiguous(log)
    assert [(e["role"], e["turn"]) for e in log] == [
        ("system", 0),
        ("user", 0),
        ("user", 0),
        ("assistant", 1),
        ("system", 1),
        ("assistant", 1),
        ("assistant", 1),
    ]
    # The first answer was written before the second mention came: the log says so.
    assert log[4]["content"] == (
        "The message of entry 2 arrived while this answer (entry 3) was being written, so "
        "entry 3 does not answer it."
    )
    # One request at a time, each the whole log as it then was: the run's steps, in order.
    prompts = [prompt_log(r) for r in model.requests]
    assert prompts == [log[:2], log[:5], log[:6]]
    assert users(prompts[1]) == ["first", "second"]
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == [
        "Answer one.",
        "Answer two.",
    ]
    assert len(slack.calls_to("reactions.add")) == 1  # no second run


def test_a_mention_after_the_runs_last_step_starts_another_run(app, slack, model):
    last_step = replies.hold(replies.finish_request())
    model.script(post("Answer one."), last_step, post("Answer two."), replies.finish_request())
    first = say(slack, "first")
    app.send_event(first)
    last_step.wait_reached()  # the run's last prompt is sent: it cannot see what comes now

    second = say(slack, "second", thread_ts=first["ts"])
    app.send_event(second)
    app.wait_listeners()
    last_step.release()
    slack.wait_for_call("reactions.remove", count=2)
    app.wait_idle()

    log = app.log(thread_of(first))
    assert_contiguous(log)
    assert [what(e) for e in log] == [
        ("system", ""),
        ("user", "first"),
        ("assistant", "postMessage"),
        ("user", "second"),
        ("assistant", "finishRequest"),  # the first run's answer to its last prompt
        ("assistant", "postMessage"),
        ("assistant", "finishRequest"),
    ]
    prompts = [prompt_log(r) for r in model.requests]
    assert prompts == [log[:2], log[:3], log[:5], log[:6]]
    assert [c.params["timestamp"] for c in slack.calls_to("reactions.add")] == [
        first["ts"],
        second["ts"],
    ]
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == [
        "Answer one.",
        "Answer two.",
    ]


def test_runs_in_different_threads_wait_on_the_model_side_by_side(app, slack, model):
    holds = [replies.hold(post("Hello.")), replies.hold(post("Hello."))]
    model.script(*holds, replies.finish_request(), replies.finish_request())
    mentions = [say(slack, "one"), say(slack, "two")]
    for mention in mentions:
        app.send_event(mention)

    for held in holds:  # both requests reach the model before either is answered
        held.wait_reached()
    for held in holds:
        held.release()
    slack.wait_for_call("reactions.remove", count=2)
    app.wait_idle()

    for mention in mentions:
        log = app.log(thread_of(mention))
        assert [e["role"] for e in log] == ["system", "user", "assistant", "assistant"]
        assert [e["content"]["toolCall"] for e in log[2:]] == ["postMessage", "finishRequest"]
    threads = sorted(c.params["thread_ts"] for c in slack.calls_to("chat.postMessage"))
    assert threads == sorted(m["ts"] for m in mentions)
