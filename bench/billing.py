"""What model calls cost as a provider bills them: prompt tokens, the part of each prompt a
prompt cache serves, and output tokens; and the same conversation laid out as plain chat
messages, the way most Slack bots send it.

The cache follows OpenAI's published rules: a prompt's prefix is served from the cache when
an earlier prompt started with the same tokens and the shared part is at least 1,024 tokens;
what is served is counted in steps of 128 tokens past the first 1,024. Cached tokens are
billed at a fraction of the input price that the caller passes in (0.5 and 0.1 are the usual
discounts). Messages are framed as OpenAI's cookbook counts them: 3 tokens a message, 3 a tool
call, 3 to prime the reply.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from context.tokens import TokenCounter

CACHE_MIN_TOKENS = 1_024
CACHE_STEP_TOKENS = 128
PER_MESSAGE = 3
PER_TOOL_CALL = 3
REPLY_PRIMING = 3


@dataclass(frozen=True)
class Call:
    """One model call as billed: its prompt tokens, how many of them the cache served, and
    its output tokens."""

    prompt: int
    cached: int
    output: int

    def billed_input(self, cached_rate: float) -> float:
        """Input tokens at the full price that cost the same as this call's input."""
        return self.prompt - self.cached + cached_rate * self.cached


def cacheable(shared_tokens: int) -> int:
    """How many of `shared_tokens` leading tokens (shared with an earlier prompt) a cache hit
    serves: none under 1,024, else 1,024 and whole 128-token steps after it."""
    if shared_tokens < CACHE_MIN_TOKENS:
        return 0
    steps = (shared_tokens - CACHE_MIN_TOKENS) // CACHE_STEP_TOKENS
    return CACHE_MIN_TOKENS + steps * CACHE_STEP_TOKENS


def common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, by halving (slice comparisons run in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def request_text(request: dict[str, Any]) -> str:
    """A request in the order a provider reads (and caches) it: tools, then the messages."""
    parts = []
    if request.get("tools"):
        parts.append(json.dumps(request["tools"], ensure_ascii=False, separators=(",", ":")))
    for message in request["messages"]:
        parts.append(message["role"])
        parts.append(_content_text(message.get("content")))
    return "\n".join(parts)


def prompt_tokens(request: dict[str, Any], counter: TokenCounter) -> int:
    """The request's prompt tokens: the tools' schemas, each message with its framing."""
    total = REPLY_PRIMING
    if request.get("tools"):
        tools = json.dumps(request["tools"], ensure_ascii=False, separators=(",", ":"))
        total += counter.count(tools)
    for message in request["messages"]:
        total += PER_MESSAGE + counter.count(message["role"])
        total += counter.count(_content_text(message.get("content")))
    return total


def tool_call_tokens(calls: Iterable[tuple[str, dict[str, Any]]], counter: TokenCounter) -> int:
    """Output tokens of a reply made of tool calls (name and JSON arguments each)."""
    return sum(
        PER_TOOL_CALL + counter.count(name) + counter.count(json.dumps(arguments))
        for name, arguments in calls
    )


class ProviderCache:
    """The provider's prompt cache over one conversation: every prompt sent so far."""

    def __init__(self, counter: TokenCounter) -> None:
        self._counter = counter
        self._sent: list[str] = []

    def bill(self, request: dict[str, Any], output: int) -> Call:
        text = request_text(request)
        shared = max((common_prefix(text, earlier) for earlier in self._sent), default=0)
        self._sent.append(text)
        # The token at the boundary may be spelled differently in the two prompts: not counted.
        shared_tokens = max(0, self._counter.count(text[:shared]) - 1) if shared else 0
        total = prompt_tokens(request, self._counter)
        return Call(total, min(cacheable(shared_tokens), total), output)


def bill_all(
    requests: Sequence[dict[str, Any]], outputs: Sequence[int], counter: TokenCounter
) -> list[Call]:
    """Each request of one conversation, in order, as billed with a cache."""
    cache = ProviderCache(counter)
    return [cache.bill(request, output) for request, output in zip(requests, outputs, strict=True)]


@dataclass(frozen=True)
class ChatMessage:
    """One Slack message of the thread: a person's (`author` their mention) or the bot's."""

    author: str
    text: str
    from_bot: bool


def plain_chat_requests(
    persona: str, thread: Sequence[ChatMessage]
) -> list[tuple[dict[str, Any], str]]:
    """The requests a plain chat bot sends for the same thread, each with the reply it got: at
    each of the bot's replies, the persona as the system message and every message before the
    reply (people's as user messages naming their author, the bot's as assistant messages);
    no tools, one call per reply."""
    requests = []
    for position, message in enumerate(thread):
        if not message.from_bot or (position and thread[position - 1].from_bot):
            continue  # a reply split in several Slack messages is still one answer
        messages: list[dict[str, Any]] = [{"role": "system", "content": persona}]
        for earlier in thread[:position]:
            if earlier.from_bot:
                messages.append({"role": "assistant", "content": earlier.text})
            else:
                messages.append({"role": "user", "content": f"{earlier.author}: {earlier.text}"})
        reply = []
        for later in thread[position:]:
            if not later.from_bot:
                break
            reply.append(later.text)
        requests.append(({"messages": messages}, "\n".join(reply)))
    return requests


def _content_text(content: Any) -> str:
    if isinstance(content, list):  # text and image parts: the text is what is counted here
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""
