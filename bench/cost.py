"""Cost per answer, the way users pay for it: one thread of mentions answered in sequence
through the real app, and the same conversation sent as plain chat messages, both billed
under the same prompt-cache model (`bench.billing`).

Two threads: 20 mentions, and 50 (about 100 model calls when each answer takes two). Each
thread already holds two messages when the bot is first mentioned; the first run reads the
thread history, and so does every 10th run after it (as when someone asks for a summary).
The scripted model answers each mention in two calls (postMessage, then finishRequest) or in
one (both in the same reply); the figures are given for both.

Per answered mention: model calls, prompt tokens, billed-equivalent input tokens (cached
tokens at 0.5 and at 0.1 of the input price), output tokens. The plain chat layout: at each
reply, the persona as the system message and every message of the thread before it, one call
per reply, no tools (what most Slack bots send). Tokens are counted with the model's
tokenizer (o200k_base for gpt-4o-mini); the tools are counted as their compact JSON.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from assistant.fakes import ids
from assistant.run.core.prompt import fixed_tokens
from assistant.slack.text import clean_user_text
from bench import conversation
from bench.billing import Call, ChatMessage, bill_all, plain_chat_requests, tool_call_tokens
from bench.model import AnsweringModel
from bench.report import Figure
from context.tokens import TokenCounter, counter_for

MODEL = "gpt-4o-mini"  # the app's default model: o200k_base
FULL_THREADS, SMOKE_THREADS = (20, 50), (3,)
HISTORY_EVERY = 10
RATES = (0.5, 0.1)
RATIO_GOALS = {0.5: 2.5, 0.1: 1.5}  # billed input per answer, ours ÷ plain chat, at most
FIXED_GOAL = 450  # tokens of system message and tool schemas


@dataclass(frozen=True)
class Thread:
    """What one recorded thread cost: our calls, the plain layout's, and how many answers."""

    mentions: int
    ours: list[Call]
    plain: list[Call]
    first_prompt: tuple[int, int]  # prompt tokens of the first call: ours, plain


def run(smoke: bool = False) -> list[Figure]:
    counter = counter_for(MODEL)
    fixed = fixed_tokens(counter)
    figures = [
        Figure("token counter", getattr(counter, "name", type(counter).__name__)),
        Figure(
            "fixed text: system message + tool schemas (+ framing),"
            " as assistant.run.core.prompt counts",
            f"{fixed:,} tokens",
            f"≤ {FIXED_GOAL}",
            fixed <= FIXED_GOAL,
        ),
    ]
    for mentions in SMOKE_THREADS if smoke else FULL_THREADS:
        for one_call in (False, True):
            thread = record(mentions, one_call, counter)
            figures += thread_figures(thread, "one call" if one_call else "two calls")
    return figures


def record(mentions: int, one_call: bool, counter: TokenCounter) -> Thread:
    """`mentions` mentions in one thread through the real app, each answered before the next;
    what they cost, and what the plain layout costs for the same messages and replies."""
    model = AnsweringModel(history_every=HISTORY_EVERY, one_call=one_call)
    with conversation.planning_thread(model) as planning:
        for mention in itertools.islice(planning.mentions, mentions):
            planning.app.send_event(mention.event)
            conversation.wait_answered(planning.slack, model, [mention], timeout=30)
        planning.app.wait_idle()
        requests = planning.model.requests
        thread = planning.slack.thread(ids.CHANNEL_ID, planning.thread_ts)
    outputs = [tool_call_tokens(calls, counter) for calls in model.replies]
    ours = bill_all(requests, outputs, counter)
    persona = json.loads(requests[0]["messages"][1]["content"])[0]["content"]
    plain_requests = plain_chat_requests(persona, [chat_message(m) for m in thread])
    plain = bill_all(
        [request for request, _ in plain_requests],
        [counter.count(reply) for _, reply in plain_requests],
        counter,
    )
    return Thread(mentions, ours, plain, (ours[0].prompt, plain[0].prompt))


def chat_message(message: dict[str, Any]) -> ChatMessage:
    from_bot = bool(message.get("bot_id")) or message.get("user") == ids.BOT_USER_ID
    text = clean_user_text(message.get("text", ""), None if from_bot else ids.BOT_USER_ID)
    return ChatMessage(f"<@{message.get('user', 'unknown')}>", text, from_bot)


def per_answer(calls: list[Call], answers: int) -> dict[str, float]:
    return {
        "calls": len(calls) / answers,
        "prompt": sum(c.prompt for c in calls) / answers,
        "output": sum(c.output for c in calls) / answers,
        **{f"billed {rate}": sum(c.billed_input(rate) for c in calls) / answers for rate in RATES},
    }


def thread_figures(thread: Thread, mode: str) -> list[Figure]:
    name = f"{thread.mentions} mentions, {mode}"
    ours = per_answer(thread.ours, thread.mentions)
    plain = per_answer(thread.plain, thread.mentions)
    cached_share = sum(c.cached for c in thread.ours) / sum(c.prompt for c in thread.ours)
    figures = [
        Figure(
            f"{name}: model calls / prompt tokens per answer (whole thread)",
            f"{ours['calls']:.2f} / {ours['prompt']:,.0f} "
            f"({sum(c.prompt for c in thread.ours):,} tokens)",
        ),
        Figure(
            f"{name}: billed-equivalent input per answer, cached at 0.5 / 0.1",
            f"{ours['billed 0.5']:,.0f} / {ours['billed 0.1']:,.0f} "
            f"({cached_share:.0%} of prompt tokens cached)",
        ),
        Figure(f"{name}: output tokens per answer", f"{ours['output']:.0f}"),
        Figure(
            f"{name}, plain chat: prompt / billed at 0.5 / 0.1 / output per answer",
            f"{plain['prompt']:,.0f} / {plain['billed 0.5']:,.0f} / {plain['billed 0.1']:,.0f} "
            f"/ {plain['output']:.0f} ({sum(c.prompt for c in thread.plain):,} prompt tokens)",
        ),
        Figure(
            f"{name}: first prompt, ours / plain chat",
            f"{thread.first_prompt[0]:,} / {thread.first_prompt[1]:,} tokens",
        ),
    ]
    for rate in RATES:
        ratio = ours[f"billed {rate}"] / plain[f"billed {rate}"]
        goal = RATIO_GOALS[rate]
        figures.append(
            Figure(
                f"{name}: billed input per answer ÷ plain chat, cached at {rate}",
                f"{ratio:.2f}x",
                f"≤ {goal}x",
                ratio <= goal,
            )
        )
    return figures
