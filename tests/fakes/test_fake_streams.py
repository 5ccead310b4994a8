"""The fakes' streaming (assistant/fakes/openai/stream.py, assistant/fakes/slack/stream.py): the
fake model's Server-Sent Events have the Chat Completions API's chunk shapes, as the openai
package reads them; the fake Slack's stream methods keep Slack's argument rules and rate tiers."""

from __future__ import annotations

import asyncio
import json
import time

import openai
import pytest
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionChunk
from slack_sdk.errors import SlackApiError
from slack_sdk.web import WebClient

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.stream import Streamed, StreamStyle, tokens
from tests.harness import mention as say

TOOLS = [{"type": "function", "function": {"name": "postMessage", "parameters": {}}}]
CALLS = replies.tool_calls(
    ("postMessage", {"text": 'Hé "quoted" 😀 and more', "reasoning": "r"}),
    ("finishRequest", {"reasoning": "done"}),
)


def streamed_chunks(fake: FakeOpenAI, **request: object) -> list[dict]:
    """Every chunk of one streamed request through the openai package, as dicts."""

    async def read() -> list[dict]:
        client = AsyncOpenAI(api_key=ids.OPENAI_API_KEY, base_url=fake.base_url, max_retries=0)
        try:
            stream = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True, **request
            )
            return [chunk.to_dict() async for chunk in stream]
        finally:
            await client.close()

    return asyncio.run(read())


def test_tool_calls_stream_as_openai_sends_them():
    with FakeOpenAI() as fake:
        fake.script(CALLS)
        chunks = streamed_chunks(fake, tools=TOOLS, stream_options={"include_usage": True})
    for chunk in chunks:
        ChatCompletionChunk.model_validate(chunk)  # the package's own type, strictly
    first = chunks[0]["choices"][0]["delta"]
    assert first["role"] == "assistant"
    (head,) = first["tool_calls"]
    assert head["index"] == 0 and head["id"].startswith("call_") and head["type"] == "function"
    assert head["function"] == {"name": "postMessage", "arguments": ""}
    pieces = {0: "", 1: ""}
    names = {}
    for chunk in chunks[:-1]:
        for call in chunk["choices"][0]["delta"].get("tool_calls") or []:
            pieces[call["index"]] += call["function"].get("arguments", "")
            if "name" in call["function"]:
                names[call["index"]] = call["function"]["name"]
    assert names == {0: "postMessage", 1: "finishRequest"}
    assert json.loads(pieces[0]) == {"text": 'Hé "quoted" 😀 and more', "reasoning": "r"}
    assert json.loads(pieces[1]) == {"reasoning": "done"}
    assert len(chunks) > 10  # in token-sized pieces
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0
    assert all(c.get("usage") is None for c in chunks[:-1])


def test_without_include_usage_there_is_no_usage_chunk_and_text_streams_as_content():
    with FakeOpenAI() as fake:
        fake.script(replies.text("Just words, no tool."))
        chunks = streamed_chunks(fake)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == (
        "Just words, no tool."
    )
    assert not any("usage" in c for c in chunks)


def test_whole_calls_come_in_one_chunk_as_llama_cpp_and_ollama_send_them():
    with FakeOpenAI() as fake:
        fake.script(Streamed(CALLS, StreamStyle(whole_calls=True)))
        chunks = streamed_chunks(fake, tools=TOOLS)
    assert len(chunks) == 2
    calls = chunks[0]["choices"][0]["delta"]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["postMessage", "finishRequest"]
    assert json.loads(calls[0]["function"]["arguments"])["text"] == 'Hé "quoted" 😀 and more'


def test_the_token_rate_paces_the_stream():
    text = "word " * 20
    with FakeOpenAI() as fake:
        fake.streaming.style = StreamStyle(tokens_per_second=200)
        fake.script(replies.text(text))
        started = time.monotonic()
        streamed_chunks(fake)
        elapsed = time.monotonic() - started
    assert elapsed >= len(tokens(text)) / 200


def test_servers_that_do_not_stream():
    with FakeOpenAI() as fake:
        fake.streaming.mode = "ignored"
        fake.script(CALLS)
        client = AsyncOpenAI(api_key=ids.OPENAI_API_KEY, base_url=fake.base_url, max_retries=0)

        async def raw() -> tuple[str, dict]:
            async with client.chat.completions.with_streaming_response.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            ) as response:
                return response.headers["content-type"], json.loads(await response.read())

        kind, body = asyncio.run(raw())
        assert kind.startswith("application/json") and body["object"] == "chat.completion"

        fake.streaming.mode = "refused"
        fake.script(CALLS)
        with pytest.raises(openai.BadRequestError, match="Streaming is not supported"):
            streamed_chunks(fake, tools=TOOLS)
        assert fake.pending == 1  # kept for the request asked again without streaming


def slack_client(slack: FakeSlack) -> WebClient:
    return WebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)


def error_of(call, **kwargs) -> str:
    with pytest.raises(SlackApiError) as caught:
        call(**kwargs)
    return caught.value.response["error"]


def test_stream_methods_keep_slack_s_argument_rules():
    with FakeSlack() as slack:
        parent = say(slack, "hi")
        client = slack_client(slack)
        start = client.chat_startStream
        thread = {"channel": ids.CHANNEL_ID, "thread_ts": parent["ts"]}
        assert error_of(start, **thread) == "missing_recipient_user_id"
        assert error_of(start, **thread, recipient_user_id=ids.USER_ID) == (
            "missing_recipient_team_id"
        )
        to = {"recipient_user_id": ids.USER_ID, "recipient_team_id": ids.TEAM_ID}
        assert error_of(start, **thread, **to, markdown_text="x" * 12_001) == "msg_too_long"
        ts = start(**thread, **to, markdown_text="Hel")["ts"]
        client.chat_appendStream(channel=ids.CHANNEL_ID, ts=ts, markdown_text="lo")
        mixed = {"chunks": [{"type": "markdown_text", "text": "!"}]}
        assert error_of(client.chat_appendStream, channel=ids.CHANNEL_ID, ts=ts, **mixed) == (
            "streaming_mode_mismatch"
        )
        metadata = {"event_type": "assistant_post", "event_payload": {"entry": 2, "part": 0}}
        blocks = [{"type": "context", "elements": [{"type": "mrkdwn", "text": "rate me"}]}]
        stopped = client.chat_stopStream(
            channel=ids.CHANNEL_ID, ts=ts, markdown_text="!", metadata=metadata, blocks=blocks
        )
        assert stopped["message"]["text"] == "Hello!"
        assert stopped["message"]["streaming_state"] == "completed"
        assert (
            error_of(client.chat_appendStream, channel=ids.CHANNEL_ID, ts=ts, markdown_text="more")
            == "message_not_in_streaming_state"
        )
        assert error_of(client.chat_stopStream, channel=ids.CHANNEL_ID, ts=ts) == (
            "message_not_in_streaming_state"
        )
        (message,) = [m for m in slack.thread(ids.CHANNEL_ID, parent["ts"]) if m.get("bot_id")]
        assert (message["text"], message["metadata"], message["blocks"]) == (
            "Hello!",
            metadata,
            blocks,
        )
        # In a DM nobody else could be meant: no recipient needed.
        dm = slack.add_message(ids.DM_CHANNEL_ID, text="hi")
        assert start(channel=ids.DM_CHANNEL_ID, thread_ts=dm["ts"])["ok"]
        calls = slack.calls_to("chat.appendStream")
        assert calls[0].at <= calls[1].at  # every call with its time


def test_stream_methods_keep_their_rate_tiers():
    with FakeSlack() as slack:
        parent = say(slack, "hi")
        slack.streams.limits["chat.startStream"] = 2
        client = WebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)
        args = {
            "channel": ids.CHANNEL_ID,
            "thread_ts": parent["ts"],
            "recipient_user_id": ids.USER_ID,
            "recipient_team_id": ids.TEAM_ID,
        }
        client.chat_startStream(**args)
        client.chat_startStream(**args)
        with pytest.raises(SlackApiError) as caught:
            client.chat_startStream(**args)
        assert caught.value.response.status_code == 429
        assert int(caught.value.response.headers["Retry-After"]) >= 1
        assert slack.streams.limits["chat.appendStream"] == 100  # Tier 4
        assert slack.streams.limits["chat.stopStream"] == 20  # Tier 2


@pytest.mark.parametrize("fault", ["server_error", "disconnect"])
def test_a_call_can_be_carried_out_and_its_answer_lost(fault):
    """Slack made the stream, but the caller got a 500 or a closed connection: the message is
    in the thread (in_progress), and the call is recorded with the answer that was lost."""
    with FakeSlack() as slack:
        parent = say(slack, "hi")
        getattr(slack, fault)("chat.startStream", carried_out=True)
        client = WebClient(token=ids.BOT_TOKEN, base_url=slack.api_url, retry_handlers=[])
        with pytest.raises(Exception):  # noqa: B017 (SlackApiError or a connection error)
            client.chat_startStream(
                channel=ids.CHANNEL_ID, thread_ts=parent["ts"], markdown_text="Hel",
                recipient_user_id=ids.USER_ID, recipient_team_id=ids.TEAM_ID,
            )  # fmt: skip
        (call,) = slack.calls_to("chat.startStream")
        assert not call.ok and call.status == (500 if fault == "server_error" else 0)
        (message,) = [m for m in slack.thread(ids.CHANNEL_ID, parent["ts"]) if m.get("bot_id")]
        assert message["ts"] == call.response["ts"]
        assert (message["text"], message["streaming_state"]) == ("Hel", "in_progress")
