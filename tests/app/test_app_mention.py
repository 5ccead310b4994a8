"""A signed app_mention through real HTTP: the log, the Slack calls, the trace, the prompts."""

from __future__ import annotations

import json

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from context.canonical import load_log
from context.render import render_log
from tests.harness import mention as say
from tests.harness import prompt_log, thread_of


def test_a_mention_is_recorded_answered_and_traced(app, slack, model):
    model.script(
        replies.tool_calls(("postMessage", {"text": "Risotto!", "reasoning": "Lunch idea"})),
        replies.tool_calls(("finishRequest", {"reasoning": "Answered"})),
    )
    mention = say(slack, "lunch idea please?")
    assert app.send_event(mention).status == 200

    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    key = thread_of(mention)
    log = app.log(key)
    assert [(e["role"], e["turn"]) for e in log] == [
        ("system", 0),
        ("user", 0),
        ("assistant", 1),
        ("assistant", 1),
    ]
    assert log[1]["content"] == {"userid": f"<@{ids.USER_ID}>", "text": "lunch idea please?"}
    assert log[2]["content"] == {
        "toolCall": "postMessage",
        "text": "Risotto!",
        "reasoning": "Lunch idea",
    }
    assert log[3]["content"]["toolCall"] == "finishRequest"

    posts = slack.calls_to("chat.postMessage")
    assert len(posts) == 1
    assert posts[0].params["channel"] == mention["channel"]
    assert posts[0].params["thread_ts"] == mention["ts"]
    markdown, feedback = posts[0].params["blocks"]
    assert markdown == {"type": "markdown", "text": "Risotto!"}
    assert feedback["type"] == "context_actions"  # the answer's feedback buttons
    assert [c.method for c in slack.calls if c.method.startswith("reactions.")] == [
        "reactions.add",
        "reactions.remove",
    ]

    expected_trace = render_log(load_log(json.dumps(log)).entries)
    assert app.trace.getvalue() == expected_trace
    assert '💬 postMessage:\n   "Risotto!"\n   └─ Reason: Lunch idea' in expected_trace


def test_every_prompt_is_the_whole_log_and_extends_the_previous(app, slack, model):
    model.script(
        replies.tool_calls(("getThreadHistory", {"ascending": True, "reasoning": "context"})),
        replies.tool_calls(("postMessage", {"text": "Done", "reasoning": "answer"})),
        replies.tool_calls(("finishRequest", {"reasoning": "end"})),
    )
    mention = say(slack, "summarize")
    app.send_event(mention)
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    requests = model.requests
    assert len(requests) == 3
    log = app.log(thread_of(mention))
    previous = None
    for request in requests:
        assert request["tool_choice"] == "required"
        assert [t["function"]["name"] for t in request["tools"]] == [
            "postMessage",
            "getThreadHistory",
            "expandEntry",
            "finishRequest",
            # A channel's members may write its memory unless its settings say otherwise.
            "rememberForChannel",
            "forgetForChannel",
            "scheduleRoutine",  # a channel's thread, answering a person
        ]
        assert request["messages"][0]["role"] == "system"
        text = request["messages"][1]["content"]
        sent = prompt_log(request)
        assert sent == log[: len(sent)]  # exactly the stored log at that moment
        if previous is not None:
            assert text.startswith(previous[:-1])
        previous = text
    # the system message is the same on every call, so providers can cache it
    assert len({r["messages"][0]["content"] for r in requests}) == 1


def answer_in_one_reply(text: str) -> replies.Completion:
    """postMessage and finishRequest in one reply, as the system message asks when the
    message completes the answer."""
    return replies.tool_calls(
        ("postMessage", {"text": text, "reasoning": "answer"}),
        ("finishRequest", {"reasoning": "answered"}),
    )


def test_an_answer_in_one_reply_takes_one_call_and_marks_only_what_the_model_saw(app, slack, model):
    held = replies.hold(answer_in_one_reply("Risotto!"))
    model.script(held, answer_in_one_reply("Pudding."))
    first = say(slack, "lunch idea please?")
    app.send_event(first)
    held.wait_reached()
    # A mention while the model answers: the reply's finishRequest does not cover it.
    second = say(slack, "and dessert?", thread_ts=first["ts"])
    app.send_event(second)
    app.wait_listeners()
    held.release()
    slack.wait_for_call("reactions.remove", count=2)
    app.wait_idle()

    key = thread_of(first)
    log = app.log(key)
    shown = [e["content"] if e["role"] == "system" else e["content"].get("toolCall") for e in log]
    assert [(e["index"], e["role"], what) for e, what in zip(log, shown, strict=True)][1:] == [
        (1, "user", None),
        (2, "user", None),
        (3, "assistant", "postMessage"),
        # Written before the second mention came: the log says it does not answer it.
        (
            4,
            "system",
            "The message of entry 2 arrived while this answer (entry 3) was being written, so "
            "entry 3 does not answer it.",
        ),
        (5, "assistant", "finishRequest"),
        (6, "assistant", "postMessage"),
        (7, "assistant", "finishRequest"),
    ]
    # Two runs, one model call each: the first saw entries 0-1, the second all of them.
    prompts = [prompt_log(r) for r in model.requests]
    assert prompts == [log[:2], log[:6]]
    assert app.assistant.store.pending(key) == []
    # The reply's usage goes with its first entry only.
    metas = app.assistant.store.metadata(key)
    assert metas[3].prompt_tokens is not None and metas[5].prompt_tokens is None
    # Each run: its reaction on, the post, its reaction off, in that order.
    calls = [
        (c.method, c.params.get("timestamp") or c.params.get("text"))
        for c in slack.calls
        if c.method in ("reactions.add", "reactions.remove", "chat.postMessage")
    ]
    assert calls == [
        ("reactions.add", first["ts"]),
        ("chat.postMessage", "Risotto!"),
        ("reactions.remove", first["ts"]),
        ("reactions.add", second["ts"]),
        ("chat.postMessage", "Pudding."),
        ("reactions.remove", second["ts"]),
    ]
