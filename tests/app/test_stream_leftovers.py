"""No half-written message is left in a thread (issue 21, point 2): a stream whose start's
answer was lost, a stream that could not be stopped or deleted, a stream cut by the model with
its delete failing, and a start a killed process never learned the ts of, through the real app
and the fakes. Each stays recorded until Slack confirms it finished or gone; the log says what
the person saw."""

from __future__ import annotations

import pytest

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from assistant.run.loop.apologies import SORRY_MODEL
from context.storage import open_store
from tests.app.test_durable_runs import crashed_after
from tests.app.test_streaming import (
    ANSWER,
    FINISH,
    answer_streaming,
    bot_messages,
    held_after,
    post,
    thread_bot_texts,
)
from tests.harness import mention as say
from tests.harness import thread_of

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

STAYS = (
    "An unfinished message could not be deleted yet ({why}): it stays in the thread until a "
    "retry deletes it."
)
DELETED = "An unfinished message left in the thread earlier was deleted."


def system_texts(log: list[dict]) -> list[str]:
    return [e["content"] for e in log if e["role"] == "system"]


@pytest.mark.parametrize("fault", ["server_error", "disconnect"])
def test_a_start_slack_carried_out_but_whose_answer_was_lost_is_found_and_deleted(
    make_app, slack, model, fault
):
    app = make_app(assistant_stream="auto")
    getattr(slack, fault)("chat.startStream", carried_out=True)
    event = say(slack, "where do we eat?")
    log = answer_streaming(app, slack, model, event, replies.tool_calls(post(ANSWER), FINISH))

    (start,) = slack.calls_to("chat.startStream")
    lost = start.response["ts"]  # Slack made it; the app never learned its ts
    assert [m["text"] for m in bot_messages(slack, event)] == [ANSWER]  # one whole answer
    assert lost in [c.params["ts"] for c in slack.calls_to("chat.delete") if c.ok]
    # Deleted before the answer was posted whole: never beside it once it is there.
    deleted_at = next(c.at for c in slack.calls_to("chat.delete") if c.params["ts"] == lost)
    assert deleted_at < slack.calls_to("chat.postMessage")[0].at
    assert app.assistant.store.open_streams(thread_of(event)) == []
    assert not any("unfinished" in text for text in system_texts(log))


def test_a_stream_that_could_not_be_stopped_or_deleted_stays_owed_until_it_is_deleted(
    make_app, slack, model
):
    app = make_app(assistant_stream="auto", assistant_run_lease_seconds=1)
    slack.server_error("chat.stopStream", times=2)
    slack.server_error("chat.delete", times=4)  # past the client's 3 retries
    event = say(slack, "where do we eat?")
    log = answer_streaming(app, slack, model, event, replies.tool_calls(post(ANSWER), FINISH))
    (start,) = slack.calls_to("chat.startStream")
    streamed = start.response["ts"]

    # The answer was posted whole; the log says the half message stays beside it for now.
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == [ANSWER]
    assert log[3]["content"] == STAYS.format(why="fatal_error")
    assert log[4]["content"]["toolCall"] == "finishRequest"
    key = thread_of(event)
    # The sweep tries again (with backoff) until Slack confirms it gone.
    slack.wait_for_call("chat.delete", where=lambda c: c.ok and c.params["ts"] == streamed)
    app.wait_idle()
    assert thread_bot_texts(slack, key) == [ANSWER]
    assert app.assistant.store.open_streams(key) == []
    assert app.log(key)[5]["content"] == DELETED
    assert app.assistant.store.pending(key) == []


def test_a_stream_cut_by_the_model_whose_delete_fails_is_named_and_deleted_later(
    make_app, slack, model
):
    app = make_app(assistant_stream="auto", assistant_run_lease_seconds=1)
    gate, reply = held_after(20, replies.tool_calls(post(ANSWER), FINISH), cut_after=40)
    model.script(reply)
    slack.fail("chat.delete", "internal_error", times=2)  # the discard's, then the apology's
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    gate.wait_reached()
    (start,) = slack.wait_for_call("chat.startStream")
    gate.release()
    slack.wait_for_call("reactions.remove")
    streamed = start.response["ts"]
    slack.wait_for_call("chat.delete", where=lambda c: c.ok and c.params["ts"] == streamed)
    app.wait_idle()

    key = thread_of(event)
    log = app.log(key)
    assert log[2]["content"] == (
        "Error: the model call failed: the model service's answer was cut off. "
        f'The user was told: "{SORRY_MODEL.english()}" ' + STAYS.format(why="internal_error")
    )
    assert log[3]["content"] == DELETED
    assert thread_bot_texts(slack, key) == [SORRY_MODEL.english()]
    assert app.assistant.store.open_streams(key) == []
    # The apology carries metadata of its own: a lost start's search never takes it.
    (apology,) = slack.calls_to("chat.postMessage")
    assert apology.params["metadata"]["event_type"] == "assistant_notice"


def test_a_start_a_killed_process_never_learned_the_ts_of_is_deleted_by_the_resumed_run(
    make_app, slack, model, app_stores
):
    """The process was killed after Slack carried out chat.startStream and before its ts
    was stored: the start recorded before Slack was asked leads the resumed run to it."""
    key = crashed_after(app_stores[0], slack)
    half = slack.add_message(
        key.channel, user=ids.BOT_USER_ID, bot_id=ids.BOT_ID, text="Lunch ideas near",
        thread_ts=key.thread_ts, streaming_state="in_progress",
    )  # fmt: skip
    store = open_store(app_stores[0])
    try:
        # As the store keeps a start asked of Slack: "?" and the second it comes after.
        store.set_open_streams(key, [f"?{int(float(key.thread_ts))}.000000"])
    finally:
        store.close()
    model.script(replies.tool_calls(post(ANSWER), FINISH))
    app = make_app(assistant_stream="auto")
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    assert thread_bot_texts(slack, key) == [ANSWER]
    assert half["ts"] in [c.params["ts"] for c in slack.calls_to("chat.delete") if c.ok]
    assert app.log(key)[2]["content"] == DELETED
    assert app.assistant.store.open_streams(key) == []
