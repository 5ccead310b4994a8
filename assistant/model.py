"""The model client: one Chat Completions call per step, through `AsyncOpenAI` (SPEC §4)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import openai
from openai import AsyncOpenAI

from assistant.instructions import SYSTEM_MESSAGE
from assistant.settings import Settings
from assistant.tools import TOOL_SCHEMAS


class ModelError(Exception):
    """The model could not be reached or gave no usable answer; the message is for the log
    and holds no secret."""


@dataclass(frozen=True)
class RawToolCall:
    name: str
    arguments: str


@dataclass(frozen=True)
class ModelReply:
    calls: list[RawToolCall] = field(default_factory=list)
    text: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float = 0.0


def build_messages(prompt_text: str) -> list[dict[str, object]]:
    """The two messages of every call: the fixed instructions, then the whole log."""
    return [
        {"role": "system", "content": SYSTEM_MESSAGE},
        {"role": "user", "content": prompt_text},
    ]


class ModelClient:
    def __init__(self, settings: Settings) -> None:
        assert settings.openai_api_key is not None
        self._model = settings.assistant_model
        self._client = AsyncOpenAI(
            api_key=settings.openai_api_key.get_secret_value(),
            base_url=settings.openai_base_url,
            timeout=settings.openai_timeout,
            max_retries=settings.openai_max_retries,
        )

    async def next_step(self, prompt_text: str) -> ModelReply:
        """Ask the model for its next tool calls on the log as it is now."""
        started = time.perf_counter()
        try:
            response = await self._client.chat.completions.create(
                model=self._model,
                messages=build_messages(prompt_text),  # type: ignore[arg-type]
                tools=TOOL_SCHEMAS,  # type: ignore[arg-type]
                tool_choice="required",
            )
        except openai.APITimeoutError:
            raise ModelError("the model did not answer in time") from None
        except openai.APIStatusError as exc:
            raise ModelError(f"the model service answered HTTP {exc.status_code}") from None
        except openai.APIConnectionError:
            raise ModelError("the model service could not be reached") from None
        latency_ms = (time.perf_counter() - started) * 1000
        if not response.choices:
            raise ModelError("the model service returned no choice")
        message = response.choices[0].message
        usage = response.usage
        details = usage.prompt_tokens_details if usage else None
        return ModelReply(
            calls=[
                RawToolCall(call.function.name, call.function.arguments)
                for call in message.tool_calls or []
                if call.type == "function"
            ],
            text=message.content,
            model=response.model,
            prompt_tokens=usage.prompt_tokens if usage else None,
            cached_tokens=details.cached_tokens if details else None,
            completion_tokens=usage.completion_tokens if usage else None,
            latency_ms=latency_ms,
        )

    async def close(self) -> None:
        await self._client.close()
