"""The judge (`assistant eval --judge MODEL`): a second model that reads the question, the
recorded post and the new one, and says whether the new one is better, as good or worse, and
why, by a fixed rubric (docs/evaluation.md, "Evaluating a change"). Asked only where both steps
post."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assistant.model.attempts import ModelError
from assistant.model.client import ModelClient

RUBRIC = """You judge a Slack assistant's reply against the reply it gave before (REFERENCE) \
to the same question. Judge CANDIDATE against REFERENCE on, in order: it answers the question \
asked; what it says is right for the conversation; it is in the language of the question; it \
keeps the people and links that matter; it is short and readable in Slack. Answer with a JSON \
object only: {"verdict": "better" | "as good" | "worse", "reason": "one sentence"}."""

# A trajectory case's (`assistant eval --trajectory`): the judge reads the whole path, each
# tool call with its arguments and each post, as the console trace shows them.
PATH_RUBRIC = """You judge a Slack assistant's whole answer, the path of tool calls it took \
(reading the thread, calling tools, posting, finishing), against the path it took before \
(REFERENCE) for the same question. Judge CANDIDATE against REFERENCE on, in order: its posts \
answer the question asked; it read or called what it needed and nothing it did not; what it \
posts is right for the conversation and in the language of the question; it keeps the people \
and links that matter; it is short and readable in Slack. Answer with a JSON object only: \
{"verdict": "better" | "as good" | "worse", "reason": "one sentence"}."""

Verdict = Literal["better", "as good", "worse"]


class Judgement(BaseModel):
    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    reason: str = Field(max_length=2_000)


@dataclass(frozen=True)
class JudgeFailed:
    why: str


class Judge:
    """The judge's questions, asked through a model client the caller owns:
    `Judge(model).judge(question, reference, candidate)`."""

    def __init__(self, model: ModelClient) -> None:
        self._model = model

    async def judge(
        self, question: str, reference: str, candidate: str, rubric: str = RUBRIC
    ) -> Judgement | JudgeFailed:
        asked = json.dumps(
            {"question": question, "REFERENCE": reference, "CANDIDATE": candidate},
            ensure_ascii=False,
        )
        try:
            reply = await self._model.ask_json(rubric, asked)
        except ModelError as exc:
            return JudgeFailed(f"the judge could not be asked: {exc}")
        try:
            return Judgement.model_validate_json(reply.text or "")
        except ValidationError:
            shown = (reply.text or "nothing")[:200]
            return JudgeFailed(f"the judge's answer is not a verdict: {shown!r}")
