"""A Slack outage delays answers; it does not lose them (docs/architecture.md#slack-outages):
a run Slack fails in a way that may pass is deferred, its request owed, tried again with backoff
until Slack answers, within ASSISTANT_SLACK_OUTAGE_SECONDS; then the failure path."""

from __future__ import annotations

import re

import pytest

from assistant.fakes.openai import responses as replies
from assistant.fakes.slack.faults import DROPPED
from assistant.run.loop.apologies import SORRY_SLACK
from context.storage import open_store
from tests.harness import mention, thread_of

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

WAIT = 90  # generous: a try under an HTTP 500 includes slack-sdk's own 3 retries
DEFERRED = re.compile(
    r"Slack failed: .+\. The run stopped; it is tried again "
    r"until Slack answers, for up to \d+ (min|s)\."
)


def post_then_finish(model, count: int) -> None:
    """Each of `count` first runs answers with a post (and a finishRequest that the failed post
    leaves unrecorded); each resumed run, after posting it, finishes."""
    model.script(
        *[
            replies.tool_calls(
                ("postMessage", {"text": "Seen.", "reasoning": "answer"}),
                ("finishRequest", {"reasoning": "done"}),
            )
            for _ in range(count)
        ],
        *[replies.tool_calls(("finishRequest", {"reasoning": "done"})) for _ in range(count)],
    )


def runs_ended(slack, event, count: int = 1) -> None:
    """Until `count` runs for the message of `event` have ended (each removes its reaction)."""
    slack.wait_for_call(
        "reactions.remove", count, WAIT, where=lambda c: c.params["timestamp"] == event["ts"]
    )


def answered_in_slack(slack, event) -> None:
    slack.wait_for_call(
        "chat.postMessage",
        timeout=WAIT,
        where=lambda c: c.ok and c.params["thread_ts"] == event["ts"],
    )


def system_texts(log: list[dict]) -> list[str]:
    return [e["content"] for e in log if e["role"] == "system"][1:]


def test_mentions_during_an_outage_are_each_answered_once_when_slack_is_back(app, slack, model):
    post_then_finish(model, 5)
    # Slack's own error, which slack-sdk does not retry: each try fails at once (HTTP 500,
    # tried three times by slack-sdk first, is a case of the test below).
    end = slack.outage("chat.postMessage", status=200, error="service_unavailable")
    events = [mention(slack, f"question {n}") for n in range(5)]
    for event in events:
        assert app.send_event(event).status == 200
    for event in events:
        runs_ended(slack, event, count=2)  # deferred, and deferred again on its retry

    store = app.assistant.store
    for event in events:
        key = thread_of(event)
        assert store.pending(key), "marked answered while Slack was down"
        texts = system_texts(app.log(key))
        assert len(texts) == 1 and DEFERRED.fullmatch(texts[0]), texts  # once, not per try
        assert slack.thread(event["channel"], event["ts"])[1:] == []

    end()
    for event in events:
        answered_in_slack(slack, event)
    app.wait_idle()
    for event in events:
        key = thread_of(event)
        log = app.log(key)
        assert [m["text"] for m in slack.thread(event["channel"], event["ts"])[1:]] == ["Seen."]
        assert store.pending(key) == []
        assert store.deferred_since(key) is None
        assert log[-1]["content"]["toolCall"] == "finishRequest"
        assert not any(t.startswith("Error:") for t in system_texts(log))
        assert system_texts(log)[1:] == [
            "Slack answered again after failing during this run; the message of entry 2 "
            "was posted now."
        ]
    assert len(model.requests) == 10  # one call per first run, one per resumed run


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (500, "fatal_error"),  # after slack-sdk's own 3 retries
        (200, "service_unavailable"),
        (200, "fatal_error"),
        (429, "ratelimited"),  # past slack-sdk's own retries
        (DROPPED, None),  # the connection closed
    ],
)
def test_each_error_that_may_pass_defers_the_run(app, slack, model, status, error):
    post_then_finish(model, 1)
    end = slack.outage("chat.postMessage", status=status, error=error or "")
    event = mention(slack, "the report, please")
    assert app.send_event(event).status == 200
    runs_ended(slack, event)
    key = thread_of(event)
    assert app.assistant.store.pending(key)
    assert DEFERRED.fullmatch(system_texts(app.log(key))[0])

    end()
    answered_in_slack(slack, event)
    app.wait_idle()
    assert [m["text"] for m in slack.thread(event["channel"], event["ts"])[1:]] == ["Seen."]
    assert app.assistant.store.pending(key) == []


def test_past_the_bound_the_run_ends_with_the_failure_path(make_app, slack, model):
    app = make_app(assistant_slack_outage_seconds=2)
    post_then_finish(model, 1)
    slack.outage("chat.postMessage", status=200, error="fatal_error")  # never ends
    event = mention(slack, "the report, please")
    assert app.send_event(event).status == 200
    slack.wait_for_call(
        "chat.postMessage", timeout=WAIT, where=lambda c: c.params["text"] == SORRY_SLACK.english()
    )
    app.wait_idle()

    key = thread_of(event)
    texts = system_texts(app.log(key))
    assert len(texts) == 2 and DEFERRED.fullmatch(texts[0]), texts
    assert re.fullmatch(
        r"Error: Slack failed: fatal_error \(from chat\.postMessage\), still after \d s of "
        r"tries\. The thread could not be told\.",
        texts[1],
    ), texts
    assert app.assistant.store.pending(key) == []  # ended: no more tries
    assert app.assistant.store.deferred_since(key) is None
    assert len(model.requests) == 1


def test_a_deferral_is_kept_in_the_store_for_the_next_process(make_app, app_stores, slack, model):
    first = make_app()
    post_then_finish(model, 1)
    end = slack.outage("chat.postMessage", status=200, error="internal_error")
    event = mention(slack, "the report, please")
    assert first.send_event(event).status == 200
    runs_ended(slack, event)
    first.stop()  # its timer goes with it; the store says when the thread is due
    end()

    # Another process on the same store resumes it once due (its sweep, every half lease).
    second = make_app(database_url=app_stores[0], assistant_run_lease_seconds=2)
    answered_in_slack(slack, event)
    second.wait_idle()
    key = thread_of(event)
    assert [m["text"] for m in slack.thread(event["channel"], event["ts"])[1:]] == ["Seen."]
    assert second.assistant.store.pending(key) == []
    assert len(model.requests) == 2
    with_store = open_store(app_stores[0])
    try:
        assert with_store.deferred_since(key) is None
    finally:
        with_store.close()
