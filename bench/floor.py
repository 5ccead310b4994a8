"""The least CPU the parts an answer cannot do without cost, each measured alone: the bound
under `bench cpu`'s two goals (bench/README.md, "Goals, their figures, and what limits a miss").

`python -m bench floor`. In this process, its CPU per call taken on its own thread (the fakes
answer on threads of their own): one Slack Web API call (slack-sdk's `AsyncWebClient`,
configured as the app's), one model call answered whole (the openai client's `post`, as the
app sends it, 100 tokens) and one streamed answer of 2,000 tokens read as its least reader
would (the openai client's bytes read, each chunk's JSON parsed by pydantic-core, the fastest
parser the project has, and no more; the client's read is per HTTP chunk, and a server sends
each event in one, as OpenAI does). Then the bare Bolt
app (`bench.bare_app`) acknowledging events one at a time, in a process of its own, and one
write transaction as the store makes one (SQLite in WAL, one INSERT, from a thread).

What follows from them, for a mention answered in a channel (the event, one model call, three
Slack calls: the progress reaction added, the post, the reaction removed; two writes: the
mention before its ack, the answer once posted):
- the floor of a whole post: those parts and nothing else of the app's own (no prompt, no
  trace, no other write), against the goal of 5 ms;
- the whole post a streamed answer's 1.5x allows: the extra of 2,000 chunks is at least
  2,000 x the floor per chunk, and 1.5x holds only for a whole post of at least twice that.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2
from openai import AsyncOpenAI, DefaultAioHttpClient
from pydantic_core import from_json

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from assistant.fakes.events import builders as slack_events
from assistant.fakes.openai import responses as replies
from assistant.fakes.requests import event_callback, signed_event_request
from assistant.slack.client import close_slack_client, create_slack_client
from bench.bare_app import INBOX, BareBoltServer
from bench.cpu import STREAM_RATIO_GOAL, WHOLE_GOAL_S
from bench.report import Figure, ms
from bench.stream import answer_text, post_event
from context.storage.engine import Database

FULL = {"warmup": 20, "calls": 400, "streams": 20, "events": 500, "tokens": 2000}
SMOKE = {"warmup": 1, "calls": 3, "streams": 1, "events": 3, "tokens": 30}
SLACK_CALLS = 3  # reactions.add, chat.postMessage, reactions.remove
# The mention recorded before its ack, the answer recorded once posted.
WRITES = 2
WHOLE_TOKENS = 100


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    with FakeSlack() as slack, FakeOpenAI() as model:
        slack_call = asyncio.run(_slack_call(slack.api_url, size))
        whole_text, streamed_text = answer_text(WHOLE_TOKENS), answer_text(size["tokens"])
        model.default = lambda _body: _reply(whole_text)
        model_call = asyncio.run(_model_call(model, size))
        model.default = lambda _body: _reply(streamed_text)
        (reading, parsing), chunks = asyncio.run(_streamed_chunks(model, size))
        with BareBoltServer(slack) as bare:
            per_event = _acknowledged(bare, slack, size)
    with tempfile.TemporaryDirectory() as work:
        write = asyncio.run(_writes(Path(work) / "floor.db", size))
    whole = per_event + model_call + SLACK_CALLS * slack_call + WRITES * write
    extra = chunks * (reading + parsing)
    least_whole = extra / (STREAM_RATIO_GOAL - 1)
    return [
        Figure("CPU of one Slack Web API call (slack-sdk, the app's client)", ms(slack_call)),
        Figure(
            f"CPU of one model call, {WHOLE_TOKENS} tokens whole (openai `post`)", ms(model_call)
        ),
        Figure(
            f"CPU per streamed chunk, read by the client ({chunks} chunks an answer)",
            f"{reading * 1e6:.1f} µs",
        ),
        Figure("CPU per streamed chunk, its JSON parsed", f"{parsing * 1e6:.1f} µs"),
        Figure("CPU per event, bare Bolt app (one at a time)", ms(per_event)),
        Figure("CPU of one write transaction (SQLite in WAL, one INSERT, in a thread)", ms(write)),
        Figure(
            f"floor of a whole post: the event, a model call, {SLACK_CALLS} Slack calls and "
            f"{WRITES} writes",
            f"{ms(whole)} ({whole / WHOLE_GOAL_S:.0%} of the goal)",
            f"≤ {ms(WHOLE_GOAL_S)}",
            whole <= WHOLE_GOAL_S,
        ),
        Figure(
            f"floor of a streamed answer's extra, {size['tokens']} tokens",
            ms(extra),
        ),
        Figure(
            f"least whole post with which a streamed one can be ≤ {STREAM_RATIO_GOAL}x",
            ms(least_whole),
            f"≤ {ms(WHOLE_GOAL_S)} (both goals at once)",
            least_whole <= WHOLE_GOAL_S,
        ),
    ]


def _reply(text: str) -> Any:
    return replies.tool_calls(
        ("postMessage", {"text": text, "reasoning": "answering"}),
        ("finishRequest", {"reasoning": "done"}),
    )


async def _slack_call(api_url: str, size: dict[str, int]) -> float:
    client = create_slack_client(ids.BOT_TOKEN, api_url)
    try:
        for n in range(size["warmup"]):
            await client.chat_postMessage(channel=ids.CHANNEL_ID, text=f"warm {n}")
        started = time.thread_time()
        for n in range(size["calls"]):
            await client.chat_postMessage(channel=ids.CHANNEL_ID, text=f"floor {n}")
        return (time.thread_time() - started) / size["calls"]
    finally:
        await close_slack_client(client)


def _body(stream: bool) -> dict[str, Any]:
    return {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You answer."},
            {"role": "user", "content": "[]"},
        ],
        "stream": stream,
    }


def _client(model: FakeOpenAI) -> AsyncOpenAI:
    return AsyncOpenAI(
        api_key="sk-floor",
        base_url=model.base_url,
        max_retries=0,
        http_client=DefaultAioHttpClient(),
    )


async def _model_call(model: FakeOpenAI, size: dict[str, int]) -> float:
    async with _client(model) as client:

        async def call() -> None:
            response = await client.post(
                "/chat/completions", cast_to=httpx2.Response, body=_body(False)
            )
            from_json(response.content)

        for _ in range(size["warmup"]):
            await call()
        started = time.thread_time()
        for _ in range(size["calls"]):
            await call()
        return (time.thread_time() - started) / size["calls"]


async def _streamed_chunks(
    model: FakeOpenAI, size: dict[str, int]
) -> tuple[tuple[float, float], int]:
    """CPU per chunk of a streamed answer (the client's read of its bytes, and its JSON parsed
    once, in memory), and the chunks an answer. No reader of the stream does less: each
    chunk is a JSON object that holds a piece of the answer."""
    async with _client(model) as client:

        async def read(keep: list[bytes] | None = None) -> None:
            response = await client.post(
                "/chat/completions", cast_to=httpx2.Response, body=_body(True), stream=True
            )
            body = []
            try:
                async for data in response.aiter_bytes():
                    body.append(data)
            finally:
                await response.aclose()
            if keep is not None:
                keep += re.findall(rb"^data: (\{.*)$", b"".join(body), re.MULTILINE)

        chunks: list[bytes] = []
        await read(chunks)
        started = time.thread_time()
        for _ in range(size["streams"]):
            await read()
        reading = (time.thread_time() - started) / (size["streams"] * len(chunks))
    started = time.thread_time()
    for _ in range(size["streams"]):
        for chunk in chunks:
            from_json(chunk)
    parsing = (time.thread_time() - started) / (size["streams"] * len(chunks))
    return (reading, parsing), len(chunks)


async def _writes(path: Path, size: dict[str, int]) -> float:
    """CPU of one write made as the store makes its own (`Database.transaction`: its queue,
    BEGIN IMMEDIATE, the engine's pragmas), from a thread; the whole process's CPU, the write
    being on another thread than the loop's."""
    db = Database.open(f"sqlite:///{path}")
    INBOX.metadata.create_all(db.engine)

    def write(event_id: str) -> None:
        with db.transaction() as connection:
            connection.execute(INBOX.insert(), {"event_id": event_id, "body": "{}"})

    try:
        for n in range(size["warmup"]):
            await asyncio.to_thread(write, f"warm {n}")
        started = time.process_time()
        for n in range(size["calls"]):
            await asyncio.to_thread(write, f"floor {n}")
        return (time.process_time() - started) / size["calls"]
    finally:
        db.close()


def _acknowledged(bare: BareBoltServer, slack: FakeSlack, size: dict[str, int]) -> float:
    def send(count: int, label: str) -> None:
        for n in range(count):
            event = slack_events.message(f"{label} {n}")
            body, headers = signed_event_request(event_callback(event))
            post_event(bare.url, body, headers)

    send(size["warmup"], "warm")
    before = bare.cpu_seconds()
    send(size["events"], "floor")
    return (bare.cpu_seconds() - before) / size["events"]
