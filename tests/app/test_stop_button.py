"""The stop button that stops (issue 23): on `agent_session_stopped` the thread's run stops
with no later post, append or step; the streams Slack named keep what they showed; a system
entry says who stopped it, when and what had been shown, and answers the request (no
apology); the session leaves `processing`; the next message gets a fresh run. A stop with no
run, a repeated stop, a stop by another person and one while a stream's start was on its way
back are handled as docs/architecture.md says."""

from __future__ import annotations

import json
from typing import Any

import pytest
from slack_sdk import WebClient

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from assistant.fakes._server import Hold
from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.stream import Streamed, StreamStyle
from context.storage import OpenStream, ThreadKey
from tests.harness import RunningApp, thread_of, wait_session
from tests.harness import mention as say

ANSWER = (
    "Here are three lunch ideas near the office: the noodle bar on the corner, the Lebanese "
    "place by the river, and sandwiches from the market hall, eaten in the park when sunny."
)

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners
FINISH = ("finishRequest", {"reasoning": "done"})
POSTS = ("chat.postMessage", "chat.startStream")


def post(text: str) -> tuple[str, dict[str, str]]:
    return ("postMessage", {"text": text, "reasoning": "answer"})


def test_stop_during_a_streamed_answer(make_app, slack, model):
    slack.agents.agent = True
    app = make_app(assistant_stream="auto")
    gate = Hold()
    reply = replies.tool_calls(post(ANSWER), FINISH)
    model.script(Streamed(reply, StreamStyle(pauses=((20, gate),))))
    event = say(slack, "lunch ideas?")
    key = thread_of(event)
    assert app.send_event(event).status == 200
    gate.wait_reached()
    slack.wait_for_call("chat.startStream")

    stop = slack.agents.press_stop(event["channel"], event["ts"])
    [streamed] = stop["streaming_message_ts"]
    shown = slack.store.get(event["channel"], streamed)["text"]
    before = len(slack.calls)
    assert app.send_event(stop).status == 200
    wait_session(slack, event, "active")
    gate.release()  # the model writes on: nobody reads it any more
    app.wait_idle()

    after = slack.calls[before:]
    assert not [c for c in after if c.method in POSTS]
    assert not [c for c in after if c.method == "chat.appendStream" and c.ok]
    assert not slack.calls_to("chat.postMessage")  # no apology, no answer
    assert not slack.calls_to("chat.delete")  # what was shown stays
    message = slack.store.get(event["channel"], streamed)
    assert message["text"] == shown and message["streaming_state"] == "completed"
    assert slack.agents.session(event["channel"], event["ts"]).status == "active"
    assert len(model.requests) == 1  # no step after the stop

    log = app.log(key)
    last = log[-1]
    assert last["role"] == "system" and last["content"].startswith(f"Stopped: <@{ids.USER_ID}>")
    assert shown and shown.strip() in last["content"]
    assert not [e for e in log if e["role"] == "assistant"]
    store = app.assistant.store
    assert store.pending(key) == [] and store.open_streams(key) == []

    # The next message starts a fresh run, answered as any other.
    model.script(replies.tool_calls(post("Try the noodle bar."), FINISH))
    follow = say(slack, "just pick one", thread_ts=event["ts"])
    assert app.send_event(follow).status == 200
    app.wait_idle()
    assert app.log(key)[-1]["content"]["toolCall"] == "finishRequest"
    # Posted whole or streamed, as the reads of the model's stream fall: in the thread.
    texts = [m.get("text") for m in slack.store.thread(event["channel"], event["ts"])]
    assert "Try the noodle bar." in texts
    assert slack.agents.session(event["channel"], event["ts"]).statuses[-2:] == [
        "processing",
        "active",
    ]

    # A stop with no run under way changes nothing.
    entries = len(app.log(key))
    again = slack.agents.press_stop(event["channel"], event["ts"])
    assert app.send_event(again).status == 200
    app.wait_handled()
    assert len(app.log(key)) == entries


def test_a_stop_while_the_streams_start_is_on_its_way_back_quotes_what_it_shows(
    make_app, slack, model
):
    """Slack made the run's stream, and the stop came before its answer did (a loaded
    machine): the run lets that answer in before it ends, so the stop's entry quotes what
    the stream shows, as for any stream the run knew of, and the stream is kept."""
    slack.agents.agent = True
    app = make_app(assistant_stream="auto")
    gate = Hold()
    reply = replies.tool_calls(post(ANSWER), FINISH)
    model.script(Streamed(reply, StreamStyle(pauses=((20, gate),))))
    answer = slack.hold_answer("chat.startStream")
    event = say(slack, "lunch ideas?")
    key = thread_of(event)
    assert app.send_event(event).status == 200
    answer.wait_reached()  # the stream is made; the run has not heard back
    assert app.tasks_running(app.run_task) == 1

    stop = slack.agents.press_stop(event["channel"], event["ts"])
    [streamed] = stop["streaming_message_ts"]
    shown = slack.store.get(event["channel"], streamed)["text"]
    before = len(slack.calls)
    assert app.send_event(stop).status == 200
    app.wait_runs_cancelled()
    answer.release()
    wait_session(slack, event, "active")
    gate.release()
    app.wait_idle()

    last = app.log(key)[-1]
    assert last["role"] == "system" and last["content"].startswith(f"Stopped: <@{ids.USER_ID}>")
    assert shown and json.dumps(shown, ensure_ascii=False) in last["content"]
    after = slack.calls[before:]
    assert not [c for c in after if c.method in (*POSTS, "chat.appendStream", "chat.delete")]
    message = slack.store.get(event["channel"], streamed)
    assert message["text"] == shown and message["streaming_state"] == "completed"
    assert app.assistant.store.open_streams(key) == []


def waiting_on_the_model(
    app: RunningApp, slack: FakeSlack, model: FakeOpenAI, text: str
) -> tuple[dict[str, Any], ThreadKey, Hold]:
    """A mention whose run waits for the model's answer until the Hold is released: its
    event, its thread, the Hold."""
    slack.agents.agent = True
    held = replies.hold(replies.tool_calls(post("Late."), FINISH))
    model.script(held)
    event = say(slack, text)
    assert app.send_event(event).status == 200
    held.wait_reached()
    return event, thread_of(event), held


def test_a_stop_by_another_person_before_the_model_answers(app, slack, model):
    event, key, held = waiting_on_the_model(app, slack, model, "think hard about lunch")

    other = "U0FAKEBOB"
    stop = slack.agents.press_stop(event["channel"], event["ts"], user=other)
    assert stop["streaming_message_ts"] == []
    assert app.send_event(stop).status == 200
    assert app.send_event(stop).status == 200  # pressed twice (or Slack's retry): one stop
    wait_session(slack, event, "active")
    held.release()
    app.wait_idle()

    stops = [e for e in app.log(key) if str(e["content"]).startswith("Stopped: ")]
    assert len(stops) == 1
    assert (
        stops[0]["content"].startswith(f"Stopped: <@{other}> pressed stop at ")
        and f"(not <@{ids.USER_ID}>, who asked)" in stops[0]["content"]
    )
    assert "Nothing of it had been shown." in stops[0]["content"]
    assert not slack.calls_to("chat.postMessage")
    assert app.assistant.store.pending(key) == []


def test_a_stop_keeps_the_stream_of_a_start_the_run_never_heard_back_from(make_app, slack, model):
    """A stop pressed while a stream's start is on its way back: Slack made the stream and
    names it, the run never learnt its ts. The stop settles the start's record, and the
    message stays, now and after the thread's next run (which would delete a lost start's)."""
    app = make_app(assistant_stream="auto")
    event, key, held = waiting_on_the_model(app, slack, model, "lunch ideas?")
    # What such a start leaves: its record in the store, and the message Slack made.
    store = app.assistant.store
    marker = f"{int(float(event['ts']))}.000000"  # the second of the message it answers
    store.change_open_streams(key, [OpenStream(marker, "starting")])
    client = WebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)
    made = client.chat_startStream(
        channel=event["channel"], thread_ts=event["ts"], markdown_text="Noodles",
        recipient_user_id=ids.USER_ID, recipient_team_id=ids.TEAM_ID,
    )["ts"]  # fmt: skip

    stop = slack.agents.press_stop(event["channel"], event["ts"])
    assert stop["streaming_message_ts"] == [made]
    assert app.send_event(stop).status == 200
    wait_session(slack, event, "active")
    held.release()
    app.wait_idle()

    assert store.open_streams(key) == []
    last = app.log(key)[-1]
    assert last["content"].startswith("Stopped: ") and "(1 message(s))" in last["content"]

    model.script(replies.tool_calls(post("Try the noodle bar."), FINISH))
    follow = say(slack, "just pick one", thread_ts=event["ts"])
    assert app.send_event(follow).status == 200
    app.wait_idle()
    assert app.log(key)[-1]["content"]["toolCall"] == "finishRequest"
    assert slack.store.get(event["channel"], made)["text"] == "Noodles"
    assert not [c for c in slack.calls_to("chat.delete") if c.params.get("ts") == made]
