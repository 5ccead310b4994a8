"""Slack faults during a run (docs/log-format.md#how-a-run-ends): each leaves a clear system entry,
tells the thread when it still can, and the process goes on serving other threads."""

from __future__ import annotations

import pytest

from assistant.fakes.openai import responses as replies
from assistant.run.loop.apologies import SORRY_SLACK
from tests.app.test_model_failures import answered, script_one_answer, still_answers, system_texts

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners


@pytest.mark.parametrize(
    ("error", "times", "told"),
    [
        # The answer is refused but the thread is reachable: a short message gets through.
        ("msg_too_long", 1, True),
        # The thread is out of reach: neither the answer nor the apology can be posted.
        ("not_in_channel", 2, False),
        ("channel_not_found", 2, False),
        ("is_archived", 2, False),
        # The token was revoked while the run was under way.
        ("token_revoked", 2, False),
    ],
)
def test_a_slack_error_is_recorded_and_the_next_thread_is_still_answered(
    app, slack, model, error, times, told
):
    # The failed post ends the run: the model is not asked again.
    model.script(replies.tool_calls(("postMessage", {"text": "Here you go", "reasoning": "r"})))
    slack.fail("chat.postMessage", error, times=times)
    log = answered(app, slack, "the report, please")

    sorry = SORRY_SLACK.english()
    outcome = f'The user was told: "{sorry}"' if told else "The thread could not be told."
    assert system_texts(log) == [f"Error: Slack failed: {error} (from chat.postMessage). {outcome}"]
    assert log[-2]["content"]["toolCall"] == "postMessage"  # the intent stays on record
    posted = [c.params["text"] for c in slack.calls_to("chat.postMessage") if c.response["ok"]]
    assert posted == ([SORRY_SLACK.english()] if told else [])
    still_answers(app, slack, model)


@pytest.mark.parametrize("fault", ["rate_limit", "server_error", "dropped_connection"])
def test_429_5xx_and_a_dropped_connection_are_retried_and_the_answer_posted_once(
    app, slack, model, fault
):
    script_one_answer(model)
    if fault == "rate_limit":
        slack.rate_limit("chat.postMessage", retry_after=1)
    elif fault == "server_error":
        slack.server_error("chat.postMessage")
    else:
        slack.disconnect("chat.postMessage")
    log = answered(app, slack, "the report, please")

    assert system_texts(log) == []
    calls = slack.calls_to("chat.postMessage")
    assert [c.ok for c in calls] == [False, True]
    assert calls[-1].params["text"] == "Here you go"
    post = calls[-1].params
    assert [m["text"] for m in slack.thread(post["channel"], post["thread_ts"])[1:]] == [
        "Here you go"
    ]
    still_answers(app, slack, model)
