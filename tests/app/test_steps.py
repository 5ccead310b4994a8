"""Thinking steps (issue 23): while a run streams, each tool call other than postMessage is a
task card (`task_update` chunk) in Slack's timeline display, `in_progress` then `complete` or
`error`, through the real app and the fakes; the answer streams on below the cards, in the
same message. A run that posts whole shows none."""

from __future__ import annotations

import pytest

from assistant.fakes import ids
from assistant.fakes.events import builders as events
from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.stream import Streamed, StreamStyle
from assistant.i18n.words import ENGLISH
from assistant.run.core.leftovers import NOTICE_METADATA
from assistant.run.loop.apologies import SORRY_STEPS
from assistant.run.progress.step_cards import STEPS_METADATA
from assistant.run.tools.post_message import final_blocks, post_metadata
from tests.app.test_streaming import ANSWER, FINISH, answer, bot_messages, held_after, post
from tests.harness import mention as say
from tests.harness import seed, thread_of

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

HISTORY = ("getThreadHistory", {"reasoning": "what was said before"})


def cards(slack, ts: str) -> list[tuple[str, str, str]]:
    """(id, title, status) of each task_update message `ts` received, in order."""
    timeline = slack.streams.timelines.get((ids.CHANNEL_ID, ts), [])
    return [(c["id"], c["title"], c["status"]) for c in timeline if c["type"] == "task_update"]


def stream_chunks(slack) -> list[tuple[str, list[str]]]:
    """Each stream call with chunks: (method, the chunks' types and statuses)."""
    found = []
    for call in slack.calls:
        chunks = call.params.get("chunks")
        if call.method.startswith("chat.") and chunks:
            found.append((call.method, [c.get("status", c["type"]) for c in chunks]))
    return found


def test_a_run_that_reads_the_thread_shows_it_as_a_card_above_its_streamed_answer(
    make_app, slack, model
):
    app = make_app(assistant_stream="auto")
    gate, reply = held_after(25, replies.tool_calls(post(ANSWER), FINISH))
    model.script(replies.tool_calls(HISTORY), reply)
    event = say(slack, "what did we decide?")
    assert app.send_event(event).status == 200
    gate.wait_reached()  # the answer is being written
    (start,) = slack.wait_for_call("chat.startStream")
    assert start.params["task_display_mode"] == "timeline"
    assert start.params["chunks"] == [
        {"type": "task_update", "id": "entry-2", "title": "Reading the thread",
         "status": "in_progress"}
    ]  # fmt: skip
    # The answer goes on in the cards' message, below them, while the model writes it.
    *_, taken = slack.wait_for_call("chat.appendStream", count=2)
    assert taken.params["ts"] == start.response["ts"]
    assert ANSWER.startswith(taken.params["chunks"][-1]["text"])
    gate.release()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    # One message: the card, then the answer streamed below it, finished as the post.
    (message,) = bot_messages(slack, event)
    assert message["text"] == ANSWER and message["streaming_state"] == "completed"
    assert cards(slack, message["ts"]) == [
        ("entry-2", "Reading the thread", "in_progress"),
        ("entry-2", "Reading the thread", "complete"),
    ]
    timeline = slack.streams.timelines[(ids.CHANNEL_ID, message["ts"])]
    assert [c["type"] for c in timeline][:2] == ["task_update", "task_update"]
    assert {c["type"] for c in timeline[2:]} == {"markdown_text"}
    assert all(call.ok for call in slack.calls if call.method.startswith("chat."))
    assert slack.calls_to("chat.postMessage") == []
    log = app.log(thread_of(event))
    assert [e["content"]["toolCall"] for e in log if e["role"] == "assistant"] == [
        "getThreadHistory", "postMessage", "finishRequest",
    ]  # fmt: skip
    (stop,) = slack.calls_to("chat.stopStream")
    assert stop.params["metadata"] == post_metadata(4, 0)
    assert app.assistant.store.open_streams(thread_of(event)) == []


def test_an_expanded_entry_is_a_card_and_a_whole_post_goes_into_the_cards_message(
    make_app, slack, model
):
    app = make_app(assistant_stream="auto")
    expand = ("expandEntry", {"index": 1, "reasoning": "read it all"})
    whole = StreamStyle(whole_calls=True)  # the post's text comes at once: posted whole
    done = Streamed(replies.tool_calls(post("Done."), FINISH), whole)
    model.script(replies.tool_calls(expand), done)
    event = say(slack, "summarise")
    log = answer(app, slack, event)

    # One answer, one message: the card, then the post's text below it, with its metadata
    # and feedback buttons, as a streamed post ends.
    (message,) = bot_messages(slack, event)
    assert cards(slack, message["ts"]) == [
        ("entry-2", "Reading entry 1 in full", "in_progress"),
        ("entry-2", "Reading entry 1 in full", "complete"),
    ]
    assert message["streaming_state"] == "completed" and message["text"] == "Done."
    assert message["metadata"] == post_metadata(4, 0)
    assert message["blocks"] == final_blocks(ENGLISH, 4)
    assert slack.calls_to("chat.postMessage") == []
    assert log[4]["content"]["toolCall"] == "postMessage"
    assert app.assistant.store.metadata(thread_of(event))[4].slack_ts == message["ts"]
    assert app.assistant.store.open_streams(thread_of(event)) == []


def test_a_run_that_only_reads_leaves_its_cards_stopped_as_they_are(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    model.script(replies.tool_calls(post("Noodles."), FINISH))
    first = say(slack, "lunch?")
    answer(app, slack, first)
    # A follow-up without a mention, which the model may leave unanswered: the first
    # finishRequest of an answer with no post is refused once, the second ends it silent.
    model.script(*[replies.tool_calls(call) for call in (HISTORY, FINISH, FINISH)])
    aside = seed(slack, events.message("see you there", thread_ts=first["ts"], user="U0BOB00001"))
    answer(app, slack, aside)

    *_, steps = bot_messages(slack, first)
    # The cards' stream no post took is stopped as it is, never taken for a half post.
    assert steps["streaming_state"] == "completed" and steps["text"] == ""
    assert steps["metadata"]["event_type"] == STEPS_METADATA["event_type"]
    assert app.assistant.store.open_streams(thread_of(first)) == []


def test_the_step_cap_s_apology_goes_into_the_cards_message(make_app, slack, model):
    app = make_app(assistant_stream="auto", assistant_max_steps=2)
    model.script(replies.tool_calls(HISTORY), replies.tool_calls(HISTORY))
    event = say(slack, "keep reading")
    log = answer(app, slack, event)

    (message,) = bot_messages(slack, event)
    assert [status for _, _, status in cards(slack, message["ts"])][-1] == "complete"
    assert message["text"] == SORRY_STEPS.english() and message["streaming_state"] == "completed"
    assert message["metadata"] == NOTICE_METADATA
    assert slack.calls_to("chat.postMessage") == [] and slack.calls_to("chat.delete") == []
    assert log[-1]["content"] == (
        f"Error: stopped after 2 steps without finishRequest. "
        f'The user was told: "{SORRY_STEPS.english()}"'
    )
    assert app.assistant.store.open_streams(thread_of(event)) == []


def test_the_history_leaves_out_the_cards_message(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    model.script(replies.tool_calls(HISTORY), replies.tool_calls(post("Ok."), FINISH))
    event = say(slack, "what was said?")
    log = answer(app, slack, event)

    # The cards' message was in the thread, still streaming, when the history was read.
    assert log[3]["content"].splitlines() == [
        "Thread history (1 message, newest first):",
        "(entry 1)",
    ]


def test_a_thread_that_cannot_be_read_shows_its_card_in_error(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    slack.fail("conversations.replies", "channel_not_found")
    model.script(replies.tool_calls(HISTORY), replies.tool_calls(post("Hm."), FINISH))
    event = say(slack, "what did we decide?")
    log = answer(app, slack, event)

    assert log[3]["content"].startswith("Error: Slack did not give the thread history")
    first = bot_messages(slack, event)[0]
    assert cards(slack, first["ts"]) == [
        ("entry-2", "Reading the thread", "in_progress"),
        ("entry-2", "Reading the thread", "error"),
    ]
    assert stream_chunks(slack)[:2] == [
        ("chat.startStream", ["in_progress"]),
        ("chat.appendStream", ["error"]),
    ]
    assert "Hm." in [m["text"] for m in bot_messages(slack, event)]


def test_a_run_that_posts_whole_shows_no_steps(make_app, slack, model):
    app = make_app(assistant_stream="off")
    model.script(replies.tool_calls(HISTORY), replies.tool_calls(post(ANSWER), FINISH))
    event = say(slack, "what did we decide?")
    log = answer(app, slack, event)

    assert [m["text"] for m in bot_messages(slack, event)] == [ANSWER]
    assert [c for c in slack.calls if c.method.startswith("chat.") and "Stream" in c.method] == []
    assert log[3]["content"].startswith("Thread history")
    assert log[-1]["content"]["toolCall"] == "finishRequest"
