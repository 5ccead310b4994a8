"""Prompt economy over a 100-step thread run through the real app against the fakes.

1. Prefix share: how much of each prompt, as the provider sees it (tool schemas, the fixed
   system message, then the log), is equal to the previous prompt's beginning: the part a
   provider's prompt cache can serve. No pruning happens at this size.
2. Tokens per entry: the final log's prompt tokens per entry, against the same conversation
   rendered as plain chat messages (role/content, tool calls as OpenAI `tool_calls`, each
   followed by its `tool` result message, as that format requires). Chat messages are
   counted the way OpenAI's cookbook counts them: 3 tokens a message, 3 a tool call, plus the
   tokens of every value; the log is one user message counted the same way.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from bench import conversation
from bench.billing import common_prefix
from bench.model import AnsweringModel
from bench.report import Figure

FULL_STEPS, SMOKE_STEPS = 100, 6
PREFIX_GOAL = 0.98
MODEL = "gpt-4o-mini"
PER_MESSAGE, PER_TOOL_CALL = 3, 3


class LenEstimate:
    name = "estimate: characters / 4"

    def count(self, text: str) -> int:
        return (len(text) + 3) // 4


def token_counter() -> Any:
    """context.tokens' counter for the model when that module exists, else len/4."""
    try:
        from context.tokens import counter_for
    except ImportError:
        return LenEstimate()
    return counter_for(MODEL)


def run(smoke: bool = False) -> list[Figure]:
    steps = SMOKE_STEPS if smoke else FULL_STEPS
    requests = record_thread(steps)
    return prefix_figures(requests) + token_figures(requests[-1])


def record_thread(steps: int) -> list[dict[str, Any]]:
    """Mentions in one thread, each answered before the next, until `steps` model calls;
    the model reads the thread history in the first run and every 10th after it (as when
    asked to sum the thread up). Returns the model requests."""
    model = AnsweringModel(history_every=10)
    with conversation.planning_thread(model) as planning:
        for mention in itertools.islice(planning.mentions, steps):  # a run takes a step at least
            if len(planning.model.requests) >= steps:
                break
            planning.app.send_event(mention.event)
            conversation.wait_answered(planning.slack, model, [mention], timeout=30)
        return planning.model.requests[:steps]


def provider_text(request: dict[str, Any]) -> str:
    """The prompt in the order a provider reads (and caches) it: tools, then messages."""
    tools = json.dumps(request.get("tools"), ensure_ascii=False, separators=(",", ":"))
    return tools + "".join(str(m["content"]) for m in request["messages"])


def prefix_figures(requests: list[dict[str, Any]]) -> list[Figure]:
    prompts = [provider_text(r) for r in requests]
    logs = [r["messages"][1]["content"] for r in requests]
    shares, shared, total = [], 0, 0
    reuse: list[float] = []
    plain: list[float] = []  # shares of prompts that add no thread-history result
    for before, now, log in zip(prompts, prompts[1:], logs[1:], strict=False):
        same = common_prefix(before, now)
        shares.append(same / len(now))
        reuse.append(same / (len(before) - 1))  # all of it but its closing "]" is 100%
        shared, total = shared + same, total + len(now)
        if not log.rsplit('{"index":', 1)[-1].count("Thread history ("):
            plain.append(same / len(now))
    extends = sum(1 for a, b in itertools.pairwise(logs) if b.startswith(a[:-1]))
    mean = sum(shares) / len(shares)
    below = sum(1 for s in shares if s < PREFIX_GOAL)
    return [
        Figure("model calls (steps) in the thread", str(len(requests))),
        Figure(
            "prompts whose log extends the previous one byte for byte",
            f"{extends}/{len(logs) - 1}",
            "all",
            extends == len(logs) - 1,
        ),
        Figure(
            "prefix share, mean over prompts",
            f"{mean:.1%}",
            f"≥ {PREFIX_GOAL:.0%}",
            mean >= PREFIX_GOAL,
        ),
        Figure("prefix share, all characters sent", f"{shared / total:.1%}"),
        Figure(
            "prefix share, mean over prompts adding no thread-history result",
            f"{sum(plain) / len(plain):.1%} ({len(plain)} prompts)" if plain else "none",
        ),
        Figure(
            "reuse of the previous prompt (all of it but its closing bracket = 100%), lowest",
            f"{min(reuse):.1%}",
        ),
        Figure(
            "prefix share, lowest prompt (prompts below goal)",
            f"{min(shares):.1%} ({below} of {len(shares)} below {PREFIX_GOAL:.0%}: the first "
            "ones, while the log is short, and those adding a thread-history result)",
        ),
    ]


def chat_messages(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same conversation as plain Chat Completions messages."""
    messages: list[dict[str, Any]] = []
    waiting: str | None = None  # a tool call id whose result message is owed
    for entry in log:
        role, content = entry["role"], entry["content"]
        if role == "system" and waiting is not None:
            messages.append({"role": "tool", "tool_call_id": waiting, "content": content})
            waiting = None
            continue
        if waiting is not None:  # postMessage and finishRequest report nothing but "ok"
            messages.append({"role": "tool", "tool_call_id": waiting, "content": "ok"})
            waiting = None
        if role == "system":
            messages.append({"role": "system", "content": content})
        elif role == "user":
            name = content["userid"].strip("<@>")
            messages.append({"role": "user", "name": name, "content": content["text"]})
        else:
            arguments = {k: v for k, v in content.items() if k != "toolCall"}
            waiting = f"call_{entry['index']}"
            call = {
                "id": waiting,
                "type": "function",
                "function": {"name": content["toolCall"], "arguments": json.dumps(arguments)},
            }
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
    if waiting is not None:
        messages.append({"role": "tool", "tool_call_id": waiting, "content": "ok"})
    return messages


def chat_tokens(messages: list[dict[str, Any]], counter: Any) -> int:
    total = 0
    for message in messages:
        total += PER_MESSAGE + counter.count(message["role"])
        total += counter.count(message.get("content") or "")
        if "name" in message:
            total += 1 + counter.count(message["name"])
        for call in message.get("tool_calls", []):
            function = call["function"]
            total += PER_TOOL_CALL + counter.count(function["name"])
            total += counter.count(function["arguments"])
    return total


def token_figures(last: dict[str, Any]) -> list[Figure]:
    counter = token_counter()
    text = last["messages"][1]["content"]
    log = json.loads(text)
    ours = PER_MESSAGE + counter.count("user") + counter.count(text)
    plain = chat_tokens(chat_messages(log), counter)
    return [
        Figure("token counter", getattr(counter, "name", type(counter).__name__)),
        Figure(
            f"prompt tokens per entry, context log ({len(log)} entries)",
            f"{ours / len(log):.1f} ({ours:,} tokens)",
        ),
        Figure(
            "prompt tokens per entry, plain chat messages",
            f"{plain / len(log):.1f} ({plain:,} tokens)",
        ),
        Figure("context log ÷ chat messages", f"{ours / plain:.2f}x"),
    ]
