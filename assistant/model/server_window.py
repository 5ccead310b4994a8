"""The context window a model server says it has for a model, asked once per model before its
first prompt (docs/configuration.md, "Pointing at an OpenAI-compatible server"): llama.cpp's
`GET /props` (`default_generation_settings.n_ctx`, the window of each of its slots), vLLM's
`GET /v1/models` (the model's `max_model_len`) and Ollama's `POST /api/show` (the `num_ctx` of
the model's `parameters`, set by its Modelfile; without one Ollama's window is its server's
default, which it does not tell, and the model's own `context_length` is no window it runs
with). A server that answers none (OpenAI, a proxy) is not asked again, and nothing fails for
it: its window is learned from its first refusal of a prompt as too long, if it ever refuses
one (Ollama never does: it shortens the prompt itself).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx2
from openai import AsyncOpenAI

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 5.0  # seconds for each question, at most: the first prompt waits for it


async def window_of(client: AsyncOpenAI, model: str) -> int | None:
    """The window the server names for `model`, in its tokens; None when it names none."""
    base = str(client.base_url).rstrip("/")
    root = base.removesuffix("/v1")
    props = await _get(client, f"{root}/props")
    settings = props.get("default_generation_settings") if props else None
    if isinstance(settings, dict) and (n_ctx := _positive(settings.get("n_ctx"))):
        return n_ctx
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
    client: AsyncOpenAI, url: str, body: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The JSON object at `url` on the model's server (POSTed `body`, when given), or None
    (any failure: it is optional)."""
    try:
        async with asyncio.timeout(PROBE_TIMEOUT):
            if body is None:
                response = await client.get(url, cast_to=httpx2.Response)
            else:
                response = await client.post(url, cast_to=httpx2.Response, body=body)
            body = response.json()
    except Exception as exc:  # a server without the endpoint answers 404, or anything else
        log.debug("no context window from %s: %s", url.rsplit("/", 1)[-1], type(exc).__name__)
        return None
    return body if isinstance(body, dict) else None


def _positive(value: object) -> int | None:
    """`value` when it is a positive whole number (JSON's, not a boolean), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None
