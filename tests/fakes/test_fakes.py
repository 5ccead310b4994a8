"""The fakes, driven through the real slack-sdk and openai clients."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import openai
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from assistant.fakes.events import builders as events
from assistant.fakes.openai import responses as model
from assistant.fakes.requests import signed_event_request

CHANNEL = ids.CHANNEL_ID


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def fake_model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def web(slack: FakeSlack, **kwargs) -> WebClient:
    return WebClient(token=ids.BOT_TOKEN, base_url=slack.api_url, **kwargs)


# -- FakeSlack: Web API --------------------------------------------------------------------------


def test_auth_test_returns_bot_identity(slack: FakeSlack) -> None:
    response = web(slack).auth_test()
    assert response["user_id"] == ids.BOT_USER_ID
    assert response["bot_id"] == ids.BOT_ID
    assert response["team_id"] == ids.TEAM_ID
    assert response["url"].startswith("https://")
    [call] = slack.calls
    assert call.method == "auth.test"
    assert call.token == ids.BOT_TOKEN
    assert call.headers["Authorization"] == f"Bearer {ids.BOT_TOKEN}"


def test_tokens_are_checked(slack: FakeSlack) -> None:
    with pytest.raises(SlackApiError) as missing:
        WebClient(base_url=slack.api_url).auth_test()
    assert missing.value.response["error"] == "not_authed"
    with pytest.raises(SlackApiError) as wrong_kind:
        web(slack).apps_connections_open(app_token=ids.BOT_TOKEN)
    assert wrong_kind.value.response["error"] == "not_allowed_token_type"


@pytest.mark.asyncio
async def test_post_message_in_thread_is_stored(slack: FakeSlack) -> None:
    parent = slack.add_message(CHANNEL, text="lunch?")
    client = AsyncWebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)
    response = await client.chat_postMessage(
        channel=CHANNEL, thread_ts=parent["ts"], text="Pizza!", metadata={"event_type": "x"}
    )
    message = response["message"]
    assert response["channel"] == CHANNEL
    assert message["ts"] == response["ts"] and message["thread_ts"] == parent["ts"]
    assert message["bot_id"] == ids.BOT_ID and message["user"] == ids.BOT_USER_ID
    assert message["metadata"] == {"event_type": "x"}

    [call] = await slack.wait_for_call_async("chat.postMessage")
    assert call.params["text"] == "Pizza!"
    root, reply = slack.thread(CHANNEL, parent["ts"])
    assert root["reply_count"] == 1 and reply["text"] == "Pizza!"
    assert reply["parent_user_id"] == ids.USER_ID


def test_timestamps_are_unique_and_increasing(slack: FakeSlack) -> None:
    slack.add_message(CHANNEL, ts="1900000000.000100", text="seeded far ahead")
    client = web(slack)
    ts = [client.chat_postMessage(channel=CHANNEL, text=str(i))["ts"] for i in range(3)]
    assert len(set(ts)) == 3
    assert sorted(ts, key=float) == ts and float(ts[0]) > 1900000000.0001


def test_replies_paginate_with_parent_on_every_page(slack: FakeSlack) -> None:
    parent = slack.add_message(CHANNEL, text="parent")
    for i in range(5):
        slack.add_message(CHANNEL, text=f"reply {i}", thread_ts=parent["ts"], user="U0OTHER01")

    # SlackResponse iterates in place, so keep each page's data as it goes by.
    replies = web(slack).conversations_replies(channel=CHANNEL, ts=parent["ts"], limit=2)
    pages = [page.data for page in replies]

    assert len(pages) == 3
    assert all(page["messages"][0]["ts"] == parent["ts"] for page in pages)
    assert [page["has_more"] for page in pages] == [True, True, False]
    texts = {m["ts"]: m["text"] for page in pages for m in page["messages"]}
    assert list(texts.values()) == ["parent"] + [f"reply {i}" for i in range(5)]
    assert len(slack.calls_to("conversations.replies")) == 3


def test_unknown_thread_and_bad_cursor(slack: FakeSlack) -> None:
    slack.add_message(CHANNEL, ts="1700000000.000100")
    client = web(slack)
    with pytest.raises(SlackApiError, match="thread_not_found"):
        client.conversations_replies(channel=CHANNEL, ts="1.000001")
    with pytest.raises(SlackApiError, match="invalid_cursor"):
        client.conversations_replies(channel=CHANNEL, ts="1700000000.000100", cursor="??")


def test_scripted_error_then_success(slack: FakeSlack) -> None:
    slack.fail("chat.postMessage", "not_in_channel")
    client = web(slack)
    with pytest.raises(SlackApiError) as err:
        client.chat_postMessage(channel=CHANNEL, text="hi")
    assert err.value.response["error"] == "not_in_channel"
    assert client.chat_postMessage(channel=CHANNEL, text="hi")["ok"]
    assert [c.ok for c in slack.calls] == [False, True]


def test_too_long_message_is_refused(slack: FakeSlack) -> None:
    slack.max_text_length = 10
    with pytest.raises(SlackApiError, match="msg_too_long"):
        web(slack).chat_postMessage(channel=CHANNEL, text="x" * 11)


def test_rate_limit_is_retried_after_retry_after(slack: FakeSlack) -> None:
    slack.rate_limit("chat.postMessage", retry_after=1)
    client = web(slack, retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=1)])
    started = time.monotonic()
    assert client.chat_postMessage(channel=CHANNEL, text="hi")["ok"]
    assert time.monotonic() - started >= 1.0
    first, second = slack.calls_to("chat.postMessage")
    assert first.status == 429 and first.response["error"] == "ratelimited"
    assert second.ok


def test_server_error(slack: FakeSlack) -> None:
    slack.server_error("users.info")
    with pytest.raises(SlackApiError) as err:
        web(slack).users_info(user=ids.USER_ID)
    assert err.value.response.status_code == 500


def test_reactions_status_users_permalink(slack: FakeSlack) -> None:
    msg = slack.add_message(CHANNEL, text="hello")
    client = web(slack)
    client.reactions_add(channel=CHANNEL, timestamp=msg["ts"], name="eyes")
    with pytest.raises(SlackApiError, match="already_reacted"):
        client.reactions_add(channel=CHANNEL, timestamp=msg["ts"], name="eyes")
    assert slack.reactions(CHANNEL, msg["ts"]) == ["eyes"]
    assert slack.thread(CHANNEL, msg["ts"])[0]["reactions"][0]["name"] == "eyes"
    client.reactions_remove(channel=CHANNEL, timestamp=msg["ts"], name="eyes")
    assert slack.reactions(CHANNEL, msg["ts"]) == []

    client.assistant_threads_setStatus(channel_id=CHANNEL, thread_ts=msg["ts"], status="thinking")
    assert slack.calls_to("assistant.threads.setStatus")[0].params["status"] == "thinking"

    slack.add_user("U0BOB0001", "bob", real_name="Bob B")
    assert client.users_info(user="U0BOB0001")["user"]["profile"]["real_name"] == "Bob B"
    with pytest.raises(SlackApiError, match="user_not_found"):
        client.users_info(user="U0NOBODY1")

    link = client.chat_getPermalink(channel=CHANNEL, message_ts=msg["ts"])["permalink"]
    assert link.endswith(f"/archives/{CHANNEL}/p{msg['ts'].replace('.', '')}")


# -- FakeSlack: Socket Mode ----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_socket_mode_handshake_envelope_and_ack(slack: FakeSlack) -> None:
    received: list[SocketModeRequest] = []

    async def listener(client: SocketModeClient, request: SocketModeRequest) -> None:
        received.append(request)
        await client.send_socket_mode_response(SocketModeResponse(request.envelope_id))

    client = SocketModeClient(
        app_token=ids.APP_TOKEN, web_client=AsyncWebClient(base_url=slack.api_url)
    )
    client.socket_mode_request_listeners.append(listener)
    try:
        await client.connect()
        assert await slack.wait_connected_async() == 1
        event = events.app_mention(f"<@{ids.BOT_USER_ID}> hi")
        envelope_id = slack.send_event(event)
        ack = await slack.wait_for_ack_async(envelope_id)
    finally:
        await client.close()

    assert ack == {"envelope_id": envelope_id}
    [request] = received
    assert request.type == "events_api"
    assert request.payload["event"] == event
    assert request.payload["authorizations"][0]["user_id"] == ids.BOT_USER_ID
    [open_call] = slack.calls_to("apps.connections.open")
    assert open_call.token == ids.APP_TOKEN


# -- events --------------------------------------------------------------------------------------


def test_signed_event_request_verifies_like_bolt() -> None:
    event = events.message("hello", thread_ts="1700000000.000100")
    body, headers = signed_event_request(event, retry_num=1)
    verifier = SignatureVerifier(ids.SIGNING_SECRET)
    assert verifier.is_valid_request(body, headers)
    payload = json.loads(body)
    assert payload["type"] == "event_callback" and payload["event"] == event
    assert payload["event_id"].startswith("Ev")
    assert headers["X-Slack-Retry-Num"] == "1"
    assert headers["X-Slack-Retry-Reason"] == "http_timeout"


def test_event_builders_have_slack_shapes() -> None:
    mention = events.app_mention(f"<@{ids.BOT_USER_ID}> hi")
    assert "channel_type" not in mention
    assert mention["blocks"][0]["elements"][0]["elements"][0] == {
        "type": "user",
        "user_id": ids.BOT_USER_ID,
    }
    edit = events.message_changed(ts=mention["ts"], text="new", previous_text="old")
    assert edit["message"]["ts"] == mention["ts"] and edit["ts"] != mention["ts"]
    deleted = events.message_deleted(deleted_ts=mention["ts"], previous_text="old")
    assert deleted["deleted_ts"] == mention["ts"] and deleted["hidden"] is True
    assert events.bot_message("hi")["bot_id"] == ids.BOT_ID
    assert events.bot_message("hi", legacy=True)["subtype"] == "bot_message"
    assert events.dm("hey")["channel_type"] == "im"


# -- FakeOpenAI ----------------------------------------------------------------------------------


def client_for(fake: FakeOpenAI, **kwargs) -> openai.OpenAI:
    return openai.OpenAI(base_url=fake.base_url, api_key="test", max_retries=0, **kwargs)


def chat(client: openai.OpenAI, content: str = "hi"):
    return client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": content}]
    )


def test_tool_calls_parse_in_the_real_client(fake_model: FakeOpenAI) -> None:
    fake_model.script(
        model.tool_calls(
            ("postMessage", {"text": "hi", "reasoning": "greet"}),
            ("finishRequest", "{not json"),
        ),
        model.text("plain answer"),
    )
    client = client_for(fake_model)

    first = chat(client)
    assert first.object == "chat.completion"
    assert first.choices[0].finish_reason == "tool_calls"
    post, finish = first.choices[0].message.tool_calls
    assert post.function.name == "postMessage"
    assert json.loads(post.function.arguments) == {"text": "hi", "reasoning": "greet"}
    assert finish.function.arguments == "{not json"
    assert post.id != finish.id
    assert first.usage.prompt_tokens_details.cached_tokens == 0

    second = chat(client, "again")
    assert second.choices[0].message.content == "plain answer"
    assert [r["messages"][0]["content"] for r in fake_model.wait_for_requests(2)] == [
        "hi",
        "again",
    ]


def test_errors_surface_as_openai_exceptions(fake_model: FakeOpenAI) -> None:
    fake_model.script(model.error(500), model.rate_limited(retry_after=1))
    client = client_for(fake_model)
    with pytest.raises(openai.InternalServerError):
        chat(client)
    with pytest.raises(openai.RateLimitError) as limited:
        chat(client)
    assert limited.value.response.headers["retry-after"] == "1"
    with pytest.raises(openai.InternalServerError, match="script exhausted"):
        chat(client)


def test_more_than_128_tools_are_refused_as_openai_refuses_them() -> None:
    """OpenAI's Chat Completions takes at most 128 functions: its 400, in its shape."""

    def tools(count: int) -> list[dict]:
        function = {"parameters": {"type": "object", "properties": {}}}
        return [
            {"type": "function", "function": {"name": f"t{i}", **function}} for i in range(count)
        ]

    with FakeOpenAI(default=model.text("ok")) as fake:
        client = client_for(fake)
        messages = [{"role": "user", "content": "hi"}]
        ok = client.chat.completions.create(model="m", messages=messages, tools=tools(128))
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(model="m", messages=messages, tools=tools(205))
        invalid = list(fake.invalid_requests)
    assert ok.choices[0].message.content == "ok"
    assert refused.value.body == {
        "message": "Invalid 'tools': array too long. Expected an array with maximum length "
        "128, but got an array with length 205 instead.",
        "type": "invalid_request_error",
        "param": "tools",
        "code": "array_above_max_length",
    }
    assert invalid == [refused.value.body["message"]]


def test_rate_limit_retried_by_client(fake_model: FakeOpenAI) -> None:
    fake_model.script(model.rate_limited(retry_after=1), model.text("ok"))
    client = openai.OpenAI(base_url=fake_model.base_url, api_key="test", max_retries=1)
    assert chat(client).choices[0].message.content == "ok"
    assert len(fake_model.requests) == 2


def test_default_response_when_script_is_empty(fake_model: FakeOpenAI) -> None:
    fake_model.default = model.finish_request()
    message = chat(client_for(fake_model)).choices[0].message
    assert message.tool_calls[0].function.name == "finishRequest"


@pytest.mark.asyncio
async def test_hold_lets_a_test_act_before_the_model_answers(fake_model: FakeOpenAI) -> None:
    held = model.hold(model.text("late"))
    fake_model.script(held)
    async with openai.AsyncOpenAI(
        base_url=fake_model.base_url, api_key="test", max_retries=0
    ) as client:
        task = asyncio.create_task(
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        )
        await held.wait_reached_async()
        assert not task.done() and len(fake_model.requests) == 1
        held.release()
        assert (await task).choices[0].message.content == "late"


def test_cached_tokens_grow_with_a_shared_prefix(fake_model: FakeOpenAI) -> None:
    fake_model.default = model.text("ok")
    client = client_for(fake_model)
    long_prompt = "x" * 20_000
    chat(client, long_prompt)
    usage = chat(client, long_prompt + " more").usage
    assert usage.prompt_tokens_details.cached_tokens >= 4_096


def test_transcription(fake_model: FakeOpenAI) -> None:
    fake_model.transcription_text = "hello from audio"
    result = client_for(fake_model).audio.transcriptions.create(
        model="whisper-1", file=("clip.wav", b"RIFF0000WAVE")
    )
    assert result.text == "hello from audio"
    assert fake_model.transcriptions[0]["filename"] == "clip.wav"
