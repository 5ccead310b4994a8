"""The judge (`assistant eval --judge MODEL`): a second model that reads the question, the
recorded post and the new one, and says whether the new one is better, as good or worse, and
why, by a fixed rubric (docs/evaluation.md, "Evaluating a change"). Asked only where both steps
post."""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import TracebackType
from typing import Literal, Self

import openai
from openai import AsyncOpenAI
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assistant.model.attempts import what_failed
from assistant.model.options import ModelOptions

RUBRIC = """You judge a Slack assistant's reply against the reply it gave before (REFERENCE) \
to the same question. Judge CANDIDATE against REFERENCE on, in order: it answers the question \
asked; what it says is right for the conversation; it is in the language of the question; it \
keeps the people and links that matter; it is short and readable in Slack. Answer with a JSON \
object only: {"verdict": "better" | "as good" | "worse", "reason": "one sentence"}."""

Verdict = Literal["better", "as good", "worse"]


class Judgement(BaseModel):
    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    reason: str = Field(max_length=2_000)


@dataclass(frozen=True)
class JudgeFailed:
    why: str


class Judge:
    """`async with Judge(options) as judge: await judge.judge(question, reference, candidate)`."""

    def __init__(self, options: ModelOptions) -> None:
        self._options = options
        self._client: AsyncOpenAI | None = None

    @property
    def model(self) -> str:
        return self._options.model

    async def __aenter__(self) -> Self:
        o = self._options
        self._client = AsyncOpenAI(
            api_key=o.api_key, base_url=o.base_url, timeout=o.timeout, max_retries=o.max_retries
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._client is not None:
            await self._client.close()

    async def judge(self, question: str, reference: str, candidate: str) -> Judgement | JudgeFailed:
        assert self._client is not None, "use `async with`"
        asked = json.dumps(
            {"question": question, "REFERENCE": reference, "CANDIDATE": candidate},
            ensure_ascii=False,
        )
        try:
            completion = await self._client.chat.completions.create(
                model=self._options.model,
                messages=[
                    {"role": "system", "content": RUBRIC},
                    {"role": "user", "content": asked},
                ],
                response_format={"type": "json_object"},
                temperature=0,
            )
        except (openai.APIStatusError, openai.APIConnectionError) as exc:
            why = what_failed(exc, "the judge", "the judge")
            return JudgeFailed(f"the judge could not be asked: {why}")
        # A body that was no chat completion comes back as it was (openai does not check).
        try:
            text = completion.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            text = None
        try:
            return Judgement.model_validate_json(text or "")
        except ValidationError:
            shown = (text or "nothing")[:200]
            return JudgeFailed(f"the judge's answer is not a verdict: {shown!r}")
