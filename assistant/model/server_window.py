"""The context window a model server says it has for a model, asked once per model before its
first prompt (docs/configuration.md, "Pointing at an OpenAI-compatible server"): llama.cpp's
`GET /props` (`default_generation_settings.n_ctx`, the window of each of its slots; else the
smallest `n_ctx` of `GET /slots`), vLLM's
`GET /v1/models` (the model's `max_model_len`) and Ollama's `POST /api/show` (the `num_ctx` of
the model's `parameters`, set by its Modelfile; without one Ollama's window is its server's
default, which it does not tell, and the model's own `context_length` is no window it runs
with). A server that answers none (OpenAI, a proxy) is not asked again, and nothing fails for
it: its window is learned from its first refusal of a prompt as too long, if it ever refuses
one (Ollama never does: it shortens the prompt itself).

llama.cpp's `/props` tells more: its own cap on an answer (`params.n_predict`, `-n`; -1 for
none) and whether the chat template takes tools (`chat_template_caps.supports_tools`), which
`assistant check` reads before it suggests a flag. From the window and that cap the client
learns the answer's cap when ASSISTANT_ANSWER_TOKENS is not set (`answer_cap`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from typing import Any

import httpx2
from openai import AsyncOpenAI

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 5.0  # seconds for each question, at most: the first prompt waits for it
# The answer's cap learned from a window: an eighth of it (a post is rarely longer than a few
# hundred tokens, and a small model on a CPU that writes without end is cut sooner), at
# least MIN_ANSWER_TOKENS, at most what ASSISTANT_ANSWER_TOKENS's default is.
ANSWER_SHARE = 8
MIN_ANSWER_TOKENS = 256


@dataclass(frozen=True)
class ServerSettings:
    """What a server tells of itself for a model: its window, its own cap on an answer, and
    whether its chat template takes tools (None: not told)."""

    window: int | None = None
    answer_tokens: int | None = None
    template_tools: bool | None = None


def answer_cap(told: ServerSettings, default: int) -> int | None:
    """The answer's cap the server's settings call for (None: they tell nothing of it)."""
    caps = [] if told.window is None else [max(told.window // ANSWER_SHARE, MIN_ANSWER_TOKENS)]
    if told.answer_tokens is not None:
        caps.append(told.answer_tokens)
    return min(default, *caps) if caps else None


async def settings_of(client: AsyncOpenAI, model: str) -> ServerSettings:
    """What the server tells of itself for `model`."""
    base = str(client.base_url).rstrip("/")
    root = base.removesuffix("/v1")
    props = await _get(client, f"{root}/props")
    found = _llama_props(props) if props is not None else ServerSettings()
    if props and found.window is None:
        slots = await _get(client, f"{root}/slots", listed=True)
        windows = [
            _positive(s.get("n_ctx")) for s in (slots or {}).get("slots", []) if isinstance(s, dict)
        ]
        found = replace(found, window=min((w for w in windows if w is not None), default=None))
    if found.window is None:
        found = replace(found, window=await _named_window(client, base, root, model))
    return found


def _llama_props(props: dict[str, Any]) -> ServerSettings:
    settings = props.get("default_generation_settings")
    settings = settings if isinstance(settings, dict) else {}
    params = settings.get("params")
    params = params if isinstance(params, dict) else {}
    caps = props.get("chat_template_caps")
    tools = caps.get("supports_tools") if isinstance(caps, dict) else None
    return ServerSettings(
        _positive(settings.get("n_ctx")),
        _positive(params.get("n_predict")),
        tools if isinstance(tools, bool) else None,
    )


async def _named_window(client: AsyncOpenAI, base: str, root: str, model: str) -> int | None:
    """The window vLLM's /v1/models or Ollama's /api/show names for `model`."""
    models = await _get(client, f"{base}/models")
    for served in models.get("data", []) if models else []:
        if isinstance(served, dict) and served.get("id") == model and "max_model_len" in served:
            return _positive(served.get("max_model_len"))
    shown = await _get(client, f"{root}/api/show", {"model": model})
    parameters = shown.get("parameters") if shown else None
    if isinstance(parameters, str):
        for line in parameters.splitlines():
            name, _, value = line.strip().partition(" ")
            if name == "num_ctx" and value.strip().isdigit():
                return _positive(int(value.strip()))
    return None


async def _get(
    client: AsyncOpenAI, url: str, body: dict[str, Any] | None = None, listed: bool = False
) -> dict[str, Any] | None:
    """The JSON object at `url` on the model's server (POSTed `body`, when given), or None
    (any failure: it is optional); `listed`: a JSON array is expected, as `{"slots": […]}`."""
    try:
        async with asyncio.timeout(PROBE_TIMEOUT):
            if body is None:
                response = await client.get(url, cast_to=httpx2.Response)
            else:
                response = await client.post(url, cast_to=httpx2.Response, body=body)
            found = response.json()
    except Exception as exc:  # a server without the endpoint answers 404, or anything else
        log.debug("no context window from %s: %s", url.rsplit("/", 1)[-1], type(exc).__name__)
        return None
    if listed:
        return {"slots": found} if isinstance(found, list) else None
    return found if isinstance(found, dict) else None


def _positive(value: object) -> int | None:
    """`value` when it is a positive whole number (JSON's, not a boolean), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None
