"""Streamed answers: how soon the text shows in Slack, and what it costs.

`python -m bench stream`. `assistant serve` in its own process (its CPU is its own) answers
mentions whose answers are 100, 600 and 2,000 tokens long, the model writing 50 tokens a
second, once with ASSISTANT_STREAM=auto and once with it off. For each: the time from the
model's first token of the postMessage text to the first visible text in Slack (the stream's
start, or the whole post), the time to the final message (its last stop, or its last post),
Slack's calls per answer by method, the shortest gap between two appends, whether the final
text is what the whole post is, and the app's CPU per answer. And the stop button
(`bench.stop`): from its acknowledgement to the stopped run's last Slack call.

A model that does not stream writes the same tokens at the same pace, and is heard from only
at the end (the fake answers after the time its tokens take).
"""

from __future__ import annotations

import http.client
import itertools
import json
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from assistant.fakes import FakeOpenAI, FakeSlack
from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.stream import Streamed, StreamStyle, tokens
from assistant.fakes.requests import event_callback, signed_event_request
from bench import stop
from bench.report import Figure, ms
from bench.server import AppServer
from tests.harness import mention


class Size(TypedDict):
    sizes: tuple[int, ...]
    rate: float


FULL: Size = {"sizes": (100, 600, 2000), "rate": 50.0}
SMOKE: Size = {"sizes": (30,), "rate": 400.0}
STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")
WORDS = ("the", "team", "can", "meet", "at", "noon", "near", "the", "old", "market", "hall")
PREFIX = '{"text": "'


@dataclass
class Answer:
    first_token: float  # when the model wrote the text's first token
    first_visible: float
    final: float
    calls: Counter[str]
    shortest_gap: float | None  # between two appends
    texts: list[str]
    cpu: float


def answer_text(count: int) -> str:
    """Prose of about `count` tokens (a paragraph break every 60 words)."""
    words = [WORDS[i % len(WORDS)] for i in range(max(count - 8, 1))]
    paragraphs = [" ".join(words[i : i + 60]) + "." for i in range(0, len(words), 60)]
    return "\n\n".join(paragraphs)


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    figures = [Figure("model", f"{size['rate']:g} tokens a second; ASSISTANT_STREAM auto / off")]
    with FakeSlack() as slack, FakeOpenAI() as model, tempfile.TemporaryDirectory() as work:
        results: dict[str, dict[int, Answer]] = {}
        for mode in ("auto", "off"):
            workdir = Path(work) / mode
            workdir.mkdir()
            with AppServer(slack, model, workdir, ASSISTANT_STREAM=mode) as app:
                results[mode] = {
                    n: _answer(app, slack, model, answer_text(n), size["rate"])
                    for n in size["sizes"]
                }
                app.stop()
    figures += stop.figures(smoke)
    for n in size["sizes"]:
        streamed, whole = results["auto"][n], results["off"][n]
        latency = streamed.first_visible - streamed.first_token
        figures += [
            Figure(
                f"{n} tokens, streamed: first visible text after the text's first token",
                ms(latency),
                "≤ 300 ms",
                latency <= 0.3,
            ),
            Figure(
                f"{n} tokens, not streamed: first visible text after the text's first token",
                ms(whole.first_visible - whole.first_token),
            ),
            Figure(
                f"{n} tokens: time to the final message, streamed / not",
                f"{ms(streamed.final - streamed.first_token)} / "
                f"{ms(whole.final - whole.first_token)}",
            ),
            Figure(
                f"{n} tokens, streamed: shortest gap between two appends",
                ms(streamed.shortest_gap) if streamed.shortest_gap is not None else "no append",
                "≥ 250 ms",
                streamed.shortest_gap is None or streamed.shortest_gap >= 0.245,
            ),
            Figure(
                f"{n} tokens: the final text is the whole post's",
                "yes" if streamed.texts == whole.texts else "NO",
                "identical",
                streamed.texts == whole.texts,
            ),
            Figure(
                f"{n} tokens: Slack calls per answer, streamed / not",
                f"{_calls(streamed.calls)} / {_calls(whole.calls)}",
            ),
            Figure(
                f"{n} tokens: app CPU per answer, streamed / not",
                f"{ms(streamed.cpu)} / {ms(whole.cpu)}",
            ),
        ]
    return figures


def _answer(app: AppServer, slack: FakeSlack, model: FakeOpenAI, text: str, rate: float) -> Answer:
    arguments = {"text": text, "reasoning": "answering"}
    calls = replies.tool_calls(("postMessage", arguments), ("finishRequest", {"reasoning": "done"}))
    count = len(tokens(json.dumps(arguments, ensure_ascii=False)))
    sent: list[float] = []
    arrived: list[float] = []

    def respond(body: dict[str, Any]) -> replies.Response:
        arrived.append(time.monotonic())
        if body.get("stream"):
            return Streamed(calls, StreamStyle(tokens_per_second=rate, sent=sent))
        return replies.delay(count / rate, calls)  # the same tokens, heard of at the end

    model.default = respond
    event = mention(slack, "tell me about lunch")
    before = len(slack.calls)
    removed = len(slack.calls_to("reactions.remove"))
    cpu = app.cpu_seconds()
    body, headers = signed_event_request(event_callback(event))
    post_event(app.url, body, headers)
    slack.wait_for_call("reactions.remove", count=removed + 1, timeout=300)
    cpu = app.cpu_seconds() - cpu
    made = slack.calls[before:]
    first_text = _first_text_token(arguments, sent, arrived[0], rate)
    shown = [c for c in made if c.ok and c.method in ("chat.startStream", "chat.postMessage")]
    final = [c for c in made if c.ok and c.method in ("chat.stopStream", "chat.postMessage")]
    appends = [c.at for c in made if c.method == "chat.appendStream"]
    gaps = [b - a for a, b in itertools.pairwise(appends)]
    thread = slack.thread(event["channel"], event["ts"])
    return Answer(
        first_token=first_text,
        first_visible=shown[0].at,
        final=final[-1].at,
        calls=Counter(c.method for c in made),
        shortest_gap=min(gaps) if gaps else None,
        texts=[m["text"] for m in thread if m.get("bot_id")],
        cpu=cpu,
    )


def _first_text_token(
    arguments: dict[str, Any], sent: list[float], arrived: float, rate: float
) -> float:
    """When the model wrote the first token of the text: as the stream went out, or, for a
    whole answer, when it would have (the request's arrival, at the model's pace)."""
    written = 0
    for index, piece in enumerate(tokens(json.dumps(arguments, ensure_ascii=False))):
        written += len(piece)
        if written > len(PREFIX):
            return sent[index] if sent else arrived + (index + 1) / rate
    raise ValueError("no text in the arguments")


def _calls(calls: Counter[str]) -> str:
    shown = [m for m in (*STREAM_METHODS, "chat.postMessage") if calls.get(m)]
    return ", ".join(f"{m.removeprefix('chat.')} {calls[m]}" for m in shown)


def post_event(url: str, body: bytes, headers: dict[str, str]) -> None:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request("POST", "/slack/events", body=body, headers=headers)
        assert connection.getresponse().status == 200
    finally:
        connection.close()
