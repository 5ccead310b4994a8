"""A scripted model for the fake OpenAI server that behaves like a well-behaved real one.

It reads the log each prompt carries and answers every user entry not answered yet: one
postMessage naming the labels it answers (see `bench.texts.tag`), then finishRequest once
nothing is left; with `one_call`, both in one reply (as the system message asks when the
message completes the answer), so an answer takes one model call instead of two.

Concurrent threads each get the reply their own log calls for, so one
`FakeOpenAI(default=AnsweringModel(...))` serves any number of threads with no script queue.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from typing import Any

from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.responses import Hold, Response
from bench import texts


class AnsweringModel:
    """`latency`: seconds before each reply (FakeOpenAI delay), or a (low, high) range.
    `history_every`: every that many runs (the first included; 0 never) the run starts with
    getThreadHistory.
    `one_call`: postMessage and finishRequest in the same reply.
    `hold_replies()`: every reply waits until `release_all()`."""

    def __init__(
        self,
        latency: float | tuple[float, float] = 0.0,
        history_every: int = 0,
        seed: int = 5,
        one_call: bool = False,
    ) -> None:
        self.latency = latency
        self.history_every = history_every
        self.one_call = one_call
        self.holding = False
        self.decisions: Counter[str] = Counter()
        self.answered: list[str] = []  # every label a postMessage reply has named, in order
        self.replies: list[list[tuple[str, dict[str, Any]]]] = []  # each reply's calls
        self._rng = random.Random(seed)
        self._holds: list[Hold] = []
        self._lock = threading.Condition()

    def __call__(self, body: dict[str, Any]) -> Response:
        log = json.loads(body["messages"][1]["content"])
        calls = self._decide(log)
        reply: Response = replies.tool_calls(*calls)
        with self._lock:
            self.replies.append(calls)
            for name, arguments in calls:
                self.decisions[name] += 1
                if name == "postMessage":
                    self.answered += texts.tags_in(arguments["text"])
                    self._lock.notify_all()
            latency = (
                self._rng.uniform(*self.latency)
                if isinstance(self.latency, tuple)
                else self.latency
            )
            if latency > 0:
                reply = replies.delay(latency, reply)
            if self.holding:
                reply = replies.hold(reply)
                self._holds.append(reply)
        return reply

    def _decide(self, log: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
        asked: list[str] = []
        answered: set[str] = set()
        run_start = 0  # entries after the last finishRequest belong to the current run
        runs_done = 0
        for position, entry in enumerate(log):
            content = entry["content"]
            if entry["role"] == "user":
                asked += texts.tags_in(content["text"])
            elif entry["role"] == "assistant":
                if content["toolCall"] == "postMessage":
                    answered.update(texts.tags_in(content["text"]))
                elif content["toolCall"] == "finishRequest":
                    run_start, runs_done = position + 1, runs_done + 1
        pending = [label for label in asked if label not in answered]
        reasoning = texts.reasoning(self._rng)
        if not pending:
            return [("finishRequest", {"reasoning": reasoning})]
        in_run = [e["content"]["toolCall"] for e in log[run_start:] if e["role"] == "assistant"]
        wants_history = self.history_every and runs_done % self.history_every == 0
        if wants_history and "getThreadHistory" not in in_run:
            return [("getThreadHistory", {"ascending": False, "reasoning": reasoning})]
        text = texts.answer_text(self._rng, pending)
        post = ("postMessage", {"text": text, "reasoning": reasoning})
        if self.one_call:
            return [post, ("finishRequest", {"reasoning": texts.reasoning(self._rng)})]
        return [post]

    def wait_answered(self, labels: set[str], timeout: float) -> None:
        """Until a postMessage reply has named every label (the app then posts it). Each
        wake-up looks only at the labels answered since the last one: O(mentions) in all."""
        missing, seen = set(labels), 0
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                missing.difference_update(self.answered[seen:])
                seen = len(self.answered)
                remaining = deadline - time.monotonic()
                if not missing or remaining <= 0:
                    break
                self._lock.wait(remaining)
        if missing:
            raise TimeoutError(f"{len(missing)} of {len(labels)} mentions unanswered")

    def hold_replies(self) -> None:
        with self._lock:
            self.holding = True

    def stop_holding(self) -> None:
        """Answer the next replies as usual; those held so far wait for `release_all()`."""
        with self._lock:
            self.holding = False

    def release_all(self) -> None:
        """Let every held reply go, and answer the next ones at once."""
        with self._lock:
            self.holding = False
            held, self._holds = self._holds, []
        for hold in held:
            hold.release()
