"""Answers that appear as they are written (issue 14): postMessage texts streamed into Slack
(chat.startStream, appendStream, stopStream) while the model writes them, through the real app
and the fakes. The log is what it is without streaming; the finished messages are exactly the
posts a whole answer makes; nothing is left half-written or posted twice."""

from __future__ import annotations

import http.client
import json
import re

import pytest

from assistant.fakes import ids
from assistant.fakes._server import Hold
from assistant.fakes.events import builders as events
from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.stream import Streamed, StreamStyle, tokens
from assistant.run.core.post_limits import CUT_NOTE
from assistant.run.tools import post_message
from assistant.run.tools.post_message import post_metadata
from assistant.settings.environment import SettingsError
from assistant.slack.text import neutralize_mentions, split_message
from context.storage import ThreadKey, open_store
from context.toolcalls import PostMessage
from tests.app.test_durable_runs import crashed_after
from tests.harness import TIMEOUT, seed, thread_of
from tests.harness import mention as say

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

STREAM = "chat.startStream", "chat.appendStream", "chat.stopStream"
FINISH = ("finishRequest", {"reasoning": "done"})
ANSWER = (
    "**Lunch ideas** near the office:\n\n"
    "1. The noodle bar on the corner: quick, cheap, and the broth is excellent.\n"
    "2. The Lebanese place by the river, if you have an hour.\n"
    "3. Sandwiches from the market hall; eat them in the park when it is sunny.\n\n"
    "Tell me how many you are and I can check which one takes a group without a booking."
)
# Slack's own notation and broadcast words, which streamed pieces cut in the middle.
PINGS = re.compile(
    r"<!(channel|here|everyone|group|subteam)|(?<![^\W_])@(channel|here|everyone|group)(?![^\W_])",
    re.IGNORECASE,
)


def post(text: str) -> tuple[str, dict[str, str]]:
    return ("postMessage", {"text": text, "reasoning": "answer"})


def held_after(count: int, response: replies.Completion, **style: object) -> tuple[Hold, Streamed]:
    """`response` streamed, the model pausing after `count` tokens until the gate opens."""
    gate = Hold()
    return gate, Streamed(response, StreamStyle(pauses=((count, gate),), **style))


def answer_streaming(
    app, slack, model, event: dict, response: replies.Completion, after: tuple[int, ...] = (12,)
) -> list[dict]:
    """Send the event; the model answers `response`, pausing after each count of tokens in
    `after` until Slack has answered the next chat.startStream (ok or not): so the text is sure
    to be streamed while the model writes it, whatever the machine's pace. The thread's log."""
    gates = [Hold() for _ in after]
    model.script(Streamed(response, StreamStyle(pauses=tuple(zip(after, gates, strict=True)))))
    starts = len(slack.calls_to("chat.startStream"))
    removed = len(slack.calls_to("reactions.remove"))
    assert app.send_event(event).status == 200
    for number, gate in enumerate(gates, 1):
        gate.wait_reached()
        slack.wait_for_call("chat.startStream", count=starts + number)
        gate.release()
    slack.wait_for_call("reactions.remove", count=removed + 1)
    app.wait_idle()
    return app.log(thread_of(event))


def tokens_before(arguments: dict[str, str], text_length: int) -> int:
    """How many of the arguments' tokens the fake sends before `text_length` characters of
    the text are out."""
    sent, count = 0, 0
    whole = json.dumps(arguments, ensure_ascii=False)
    for piece in tokens(whole):
        if sent >= len('{"text": "') + text_length:
            return count
        sent += len(piece)
        count += 1
    return count


def answer(app, slack, event: dict) -> list[dict]:
    """Send the event, wait for the run to end; the thread's log."""
    before = len(slack.calls_to("reactions.remove"))
    assert app.send_event(event).status == 200
    slack.wait_for_call("reactions.remove", count=before + 1)
    app.wait_idle()
    return app.log(thread_of(event))


def bot_messages(slack, event: dict) -> list[dict]:
    key = thread_of(event)
    return [m for m in slack.thread(key.channel, key.thread_ts) if m.get("bot_id")]


def stream_calls(slack) -> list:
    return [call for call in slack.calls if call.method in STREAM]


def shown_over_time(slack, ts: str) -> list[str]:
    """The text of streamed message `ts` after each stream call that reached it."""
    shown, text = [], ""
    for call in stream_calls(slack):
        if call.ok and (call.response.get("ts") == ts or call.params.get("ts") == ts):
            text += call.params.get("markdown_text") or ""
            shown.append(text)
    return shown


def posted_whole(text: str) -> list[str]:
    """The Slack messages a postMessage of `text` becomes when posted whole."""
    return split_message(neutralize_mentions(text, 5))


def test_an_answer_streams_into_a_channel_thread_while_the_model_writes_it(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    gate, reply = held_after(25, replies.tool_calls(post(ANSWER), FINISH))
    model.script(reply)
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200

    # The model is still writing: the beginning of the answer is in the thread already.
    gate.wait_reached()
    (start,) = slack.wait_for_call("chat.startStream")
    assert start.ok
    assert ANSWER.startswith(start.params["markdown_text"])
    assert start.params["thread_ts"] == event["ts"]
    # In a channel, Slack streams to the person being answered.
    assert start.params["recipient_user_id"] == ids.USER_ID
    assert start.params["recipient_team_id"] == ids.TEAM_ID
    gate.release()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    (message,) = bot_messages(slack, event)
    assert message["text"] == ANSWER  # exactly what a whole post would be
    assert message["streaming_state"] == "completed"
    assert slack.calls_to("chat.postMessage") == []
    (stop,) = slack.calls_to("chat.stopStream")
    # The stop names the entry, which was recorded (and so had its index) before it.
    assert stop.params["metadata"] == post_metadata(2, 0)
    assert all(call.ok for call in stream_calls(slack))
    log = app.log(thread_of(event))
    assert log[2]["content"] == {"toolCall": "postMessage", "text": ANSWER, "reasoning": "answer"}
    assert log[3]["content"]["toolCall"] == "finishRequest"
    store = app.assistant.store
    meta = store.metadata(thread_of(event))[2]
    assert meta.slack_ts == message["ts"]  # marked posted, as a whole post is
    assert meta.prompt_tokens and meta.completion_tokens and meta.model  # usage kept
    assert store.open_streams(thread_of(event)) == []
    copies, _ = store.thread_messages(thread_of(event))
    assert copies[-1].text == ANSWER


def test_the_log_and_the_final_message_are_those_of_an_answer_not_streamed(make_app, slack, model):
    texts, logs = [], []
    for stream in ("auto", "off"):
        app = make_app(assistant_stream=stream)
        model.script(replies.tool_calls(post(ANSWER), FINISH))
        event = say(slack, "where do we eat?")
        log = answer(app, slack, event)
        logs.append([(e["role"], e["content"]) for e in log])
        texts.append([m["text"] for m in bot_messages(slack, event)])
    assert logs[0] == logs[1]
    assert texts[0] == texts[1] == [ANSWER]
    streamed, whole = model.requests
    assert streamed["stream"] is True and streamed["stream_options"] == {"include_usage": True}
    assert "stream" not in whole


def test_a_direct_message_is_streamed(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    event = seed(slack, events.dm("where do we eat?"))
    answer_streaming(app, slack, model, event, replies.tool_calls(post(ANSWER), FINISH))
    (start,) = slack.calls_to("chat.startStream")
    assert start.ok and start.params["channel"] == ids.DM_CHANNEL_ID
    assert [m["text"] for m in bot_messages(slack, event)] == [ANSWER]
    assert slack.calls_to("chat.postMessage") == []


def test_two_posts_in_one_reply_stream_one_after_the_other_in_order(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    first, second = "First: " + ANSWER, "Second: and one more thing."
    event = say(slack, "two things")
    into_second = len(tokens(json.dumps(post(first)[1], ensure_ascii=False))) + 8
    response = replies.tool_calls(post(first), post(second), FINISH)
    log = answer_streaming(app, slack, model, event, response, after=(12, into_second))

    assert [m["text"] for m in bot_messages(slack, event)] == [first, second]
    methods = [call.method for call in stream_calls(slack)]
    assert methods[0] == "chat.startStream" and methods[-1] == "chat.stopStream"
    # The first message is finished before the second starts.
    assert methods.count("chat.startStream") == 2
    first_stop = methods.index("chat.stopStream")
    assert methods.index("chat.startStream", 1) > first_stop
    stops = slack.calls_to("chat.stopStream")
    assert [s.params["metadata"] for s in stops] == [post_metadata(2, 0), post_metadata(3, 0)]
    assert [e["content"]["toolCall"] for e in log[2:]] == [
        "postMessage",
        "postMessage",
        "finishRequest",
    ]


def test_a_broadcast_cut_across_chunks_never_reaches_slack_whole(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    text = (
        "Heads up <!channel> and @here: the <!subteam^S0OPS|@ops> team and @everyone else "
        "meet at three. Write to lunch@here.com, not to _@channel_ or <!everyone>. Bye @group"
    )
    # The model pauses in the middle of `<!channel>`, after `<!channe`.
    arguments = {"text": text, "reasoning": "answer"}
    gate, reply = held_after(
        tokens_before(arguments, text.index("l>")),
        replies.tool_calls(("postMessage", arguments), FINISH),
        tokens_per_second=400,
    )
    model.script(reply)
    event = say(slack, "any news?")
    assert app.send_event(event).status == 200
    gate.wait_reached()
    (start,) = slack.wait_for_call("chat.startStream")
    assert "Heads up ".startswith(start.params["markdown_text"])
    gate.release()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    (message,) = bot_messages(slack, event)
    assert message["text"] == posted_whole(text)[0]
    for shown in shown_over_time(slack, message["ts"]):
        assert not PINGS.search(shown), shown
        assert "<!" not in shown
    for call in stream_calls(slack):
        assert not PINGS.search(call.params.get("markdown_text") or "")


def test_a_text_past_one_message_continues_in_a_second_streamed_message(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    text = "word " * 1400 + "\n\n" + "more " * 1000  # 7,000 characters, a break, 5,000
    arguments = {"text": text, "reasoning": "answer"}
    gate, reply = held_after(
        tokens_before(arguments, 10_600), replies.tool_calls(("postMessage", arguments), FINISH)
    )
    model.script(reply)
    event = say(slack, "tell me everything")
    assert app.send_event(event).status == 200
    gate.wait_reached()
    # The first message is whole before the text ends: the second one is streaming.
    slack.wait_for_call("chat.startStream", count=2)
    gate.release()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    messages = bot_messages(slack, event)
    assert [m["text"] for m in messages] == split_message(text)
    assert len(messages) == 2
    assert [m["metadata"]["event_payload"] for m in messages] == [
        {"entry": 2, "part": 0},
        {"entry": 2, "part": 1},
    ]
    assert slack.calls_to("chat.postMessage") == []
    assert app.assistant.store.metadata(thread_of(event))[2].slack_ts == messages[1]["ts"]


@pytest.mark.parametrize("refusal", ["unknown_method", "not_allowed_token_type"])
def test_slack_refusing_to_stream_means_one_whole_post(make_app, slack, model, refusal):
    app = make_app(assistant_stream="auto")
    slack.fail("chat.startStream", refusal)
    event = say(slack, "where do we eat?")
    answer_streaming(app, slack, model, event, replies.tool_calls(post(ANSWER), FINISH))
    assert [m["text"] for m in bot_messages(slack, event)] == [ANSWER]
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == [ANSWER]

    # Slack said it never will: the next answer does not ask again.
    model.script(replies.tool_calls(post("Again."), FINISH))
    other = say(slack, "and tomorrow?")
    answer(app, slack, other)
    assert [m["text"] for m in bot_messages(slack, other)] == ["Again."]
    assert len(slack.calls_to("chat.startStream")) == 1


def test_a_stream_start_that_is_rate_limited_means_one_whole_post(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    slack.rate_limit("chat.startStream", retry_after=30)
    event = say(slack, "where do we eat?")
    answer_streaming(app, slack, model, event, replies.tool_calls(post(ANSWER), FINISH))
    assert [m["text"] for m in bot_messages(slack, event)] == [ANSWER]
    assert len(slack.calls_to("chat.startStream")) == 1  # not retried: posted whole instead
    assert len(slack.calls_to("chat.postMessage")) == 1


def test_streams_stay_within_slack_s_rate_tier(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    # The tier's clock stands still: its burst is all there is, however long the answers
    # take on a busy machine (a moving one refills it, a start every 3.75 s).
    app.agent().slack.streaming.pacing.clock = lambda: 0.0
    # Written slowly enough to be streamed, where the tier lets it.
    style = StreamStyle(tokens_per_second=100)
    model.default = Streamed(replies.tool_calls(post(ANSWER), FINISH), style)
    asked = [say(slack, f"question {i}") for i in range(6)]
    for event in asked:
        answer(app, slack, event)
    for event in asked:
        assert [m["text"] for m in bot_messages(slack, event)] == [ANSWER]
    # A burst of starts, then whole posts: never a 429 from Slack.
    assert all(call.status == 200 for call in slack.calls)
    assert 0 < len(slack.calls_to("chat.startStream")) < len(asked)
    assert len(slack.calls_to("chat.postMessage")) == len(asked) - len(
        slack.calls_to("chat.startStream")
    )


def test_the_model_failing_mid_stream_leaves_one_apology_and_no_stream(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    gate, reply = held_after(20, replies.tool_calls(post(ANSWER), FINISH), cut_after=40)
    model.script(reply)
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    gate.wait_reached()
    (start,) = slack.wait_for_call("chat.startStream")
    gate.release()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    messages = bot_messages(slack, event)
    assert [m["text"] for m in messages] == [
        "Sorry, I couldn't get an answer from the language model just now. "
        "Please try again in a little while."
    ]
    deleted = [c.params["ts"] for c in slack.calls_to("chat.delete") if c.ok]
    assert deleted == [start.response["ts"]]
    log = app.log(thread_of(event))
    assert log[-1]["content"].startswith(
        "Error: the model call failed: the model service's answer was cut off. The user was told"
    )
    assert not any(e["role"] == "assistant" for e in log)  # nothing of the cut call recorded
    assert app.assistant.store.open_streams(thread_of(event)) == []


def test_streaming_off_posts_answers_whole(make_app, slack, model):
    with pytest.raises(SettingsError, match="ASSISTANT_STREAM"):
        make_app(assistant_stream="sometimes")
    app = make_app(assistant_stream="off")
    model.script(replies.tool_calls(post(ANSWER), FINISH))
    event = say(slack, "where do we eat?")
    answer(app, slack, event)
    assert [m["text"] for m in bot_messages(slack, event)] == [ANSWER]
    assert stream_calls(slack) == []
    assert all("stream" not in request for request in model.requests)


def test_a_server_sending_whole_calls_in_one_chunk_posts_them_whole(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    model.streaming.style = StreamStyle(whole_calls=True)
    model.script(replies.tool_calls(post(ANSWER), FINISH))
    event = say(slack, "where do we eat?")
    log = answer(app, slack, event)
    assert [m["text"] for m in bot_messages(slack, event)] == [ANSWER]
    assert model.requests[0]["stream"] is True  # a streamed answer, its calls in one chunk
    assert stream_calls(slack) == []  # nothing to stream: it came whole
    assert [e["content"]["toolCall"] for e in log[2:]] == ["postMessage", "finishRequest"]
    assert app.assistant.store.metadata(thread_of(event))[2].prompt_tokens


def test_a_server_that_cannot_stream_is_asked_for_whole_answers_from_then_on(
    make_app, slack, model
):
    for mode in ("ignored", "refused"):
        app = make_app(assistant_stream="auto")
        model.streaming.mode = mode
        model.script(replies.tool_calls(post(f"{mode}: {ANSWER}")), replies.tool_calls(FINISH))
        before = len(model.requests)
        event = say(slack, "where do we eat?")
        answer(app, slack, event)
        assert [m["text"] for m in bot_messages(slack, event)] == [f"{mode}: {ANSWER}"]
        asked = [r.get("stream", False) for r in model.requests[before:]]
        expected = [True, False] if mode == "ignored" else [True, False, False]
        assert asked == expected, mode
        assert app.assistant.model.limits.streams("gpt-4o-mini") is False


def test_a_text_over_the_caps_is_taken_back_while_it_streams(make_app, slack, model):
    app = make_app(assistant_stream="auto", assistant_max_post_chars_per_run=300)
    gate, reply = held_after(60, replies.tool_calls(post(ANSWER)))
    model.script(reply, replies.tool_calls(FINISH))
    event = say(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    gate.wait_reached()
    (start,) = slack.wait_for_call("chat.startStream")
    gate.release()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    # Nothing of the stream stays: the text is posted cut to the cap, whole, with a note
    # (tests/app/test_answer_caps.py).
    assert start.response["ts"] in [c.params["ts"] for c in slack.calls_to("chat.delete")]
    (message,) = bot_messages(slack, event)
    assert message["ts"] != start.response["ts"]
    log = app.log(thread_of(event))
    assert log[3]["content"].startswith("The postMessage of entry 2 is posted cut to its first ")
    assert log[3]["content"].endswith(
        ": its 325 characters are more than the 300 this answer may still post of its 300 "
        "(ASSISTANT_MAX_POST_CHARS_PER_RUN)."
    )
    assert message["text"].endswith(CUT_NOTE) and len(message["text"]) <= 300


# -- crashes ---------------------------------------------------------------------------------


def crashed_mid_stream(url: str, slack, text: str, *, stopped: bool) -> tuple[ThreadKey, str]:
    """The store and Slack as a process killed while it finished streaming leaves them: the
    postMessage recorded (entry 2), its message streamed; `stopped`: the stop (with the post's
    metadata) went through, but the entry was not marked posted."""
    key = crashed_after(url, slack, PostMessage(text=text), posted=False)
    shown = text if stopped else text[: len(text) // 2]
    extra = {"metadata": post_metadata(2, 0)} if stopped else {}
    message = slack.add_message(
        key.channel,
        user=ids.BOT_USER_ID,
        bot_id=ids.BOT_ID,
        text=shown,
        thread_ts=key.thread_ts,
        streaming_state="completed" if stopped else "in_progress",
        **extra,
    )
    store = open_store(url)
    try:
        store.set_open_streams(key, [message["ts"]])
    finally:
        store.close()
    return key, message["ts"]


def thread_bot_texts(slack, key: ThreadKey) -> list[str]:
    return [m["text"] for m in slack.thread(key.channel, key.thread_ts) if m.get("bot_id")]


def test_a_stream_cut_short_after_its_post_was_recorded_is_replaced_by_the_whole_post(
    make_app, slack, model, app_stores
):
    key, partial = crashed_mid_stream(app_stores[0], slack, ANSWER, stopped=False)
    model.script(replies.tool_calls(FINISH))
    app = make_app(assistant_stream="auto")
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    assert thread_bot_texts(slack, key) == [ANSWER]
    assert [c.params["ts"] for c in slack.calls_to("chat.delete")] == [partial]
    (posted,) = slack.calls_to("chat.postMessage")
    assert posted.params["metadata"] == post_metadata(2, 0)
    log = app.log(key)
    assert [e["content"] for e in log[3:5]] == [
        "The process restarted during this run; the unfinished message it was streaming was "
        "deleted.",
        "The process restarted during this run; the message of entry 2 was posted now.",
    ]
    assert app.assistant.store.open_streams(key) == []


def test_a_stream_stopped_before_the_crash_is_kept(make_app, slack, model, app_stores):
    key, whole = crashed_mid_stream(app_stores[0], slack, ANSWER, stopped=True)
    model.script(replies.tool_calls(FINISH))
    app = make_app(assistant_stream="auto")
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    assert thread_bot_texts(slack, key) == [ANSWER]
    assert slack.calls_to("chat.delete") == []
    assert slack.calls_to("chat.postMessage") == []
    assert app.log(key)[3]["content"] == (
        "The process restarted during this run; the message of entry 2 had reached Slack."
    )
    assert app.assistant.store.metadata(key)[2].slack_ts == whole


def deliver(url: str, body: bytes, headers: dict[str, str]) -> int:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
    try:
        connection.request("POST", "/slack/events", body=body, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


@pytest.mark.parametrize("stream", ["auto", "off"])
def test_the_final_message_of_a_post_gets_its_blocks_streamed_or_not(
    make_app, slack, model, monkeypatch, stream
):
    """`final_blocks` decides what goes under a post's last message (the panel's feedback
    buttons): under the stop of a stream as under a whole post."""
    buttons = [{"type": "context", "elements": [{"type": "mrkdwn", "text": "Was it useful?"}]}]
    monkeypatch.setattr(post_message, "final_blocks", lambda ctx, index: buttons)
    app = make_app(assistant_stream=stream)
    event = say(slack, "where do we eat?")
    response = replies.tool_calls(post(ANSWER), FINISH)
    if stream == "auto":
        answer_streaming(app, slack, model, event, response)
        (stop,) = slack.calls_to("chat.stopStream")
        assert stop.params["blocks"] == buttons
    else:
        model.script(response)
        answer(app, slack, event)
    (message,) = bot_messages(slack, event)
    assert message["text"] == ANSWER
    assert message["blocks"][-1] == buttons[0]
