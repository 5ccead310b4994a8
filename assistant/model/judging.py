"""The judge: a second model that reads a question and an answer and says how good the answer
is, and why, by a fixed rubric. Two uses, one rubric (`CRITERIA`):

- `assistant eval --judge MODEL` (`Judge`, `RUBRIC`): the new post against the recorded one,
  better, as good or worse (docs/evaluation.md, "Evaluating a change"). Asked only where both
  steps post.
- Live answers judged (ASSISTANT_JUDGE_SAMPLE: `LiveJudgement`, `LIVE_RUBRIC`): an answer
  posted in Slack against the question it answers, good, acceptable or poor
  (docs/evaluation.md, "Watching live quality"; `assistant/run/judging/`).

Here, in the model's room, because both the eval (above the runs) and the runs use it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assistant.model.attempts import ModelError
from assistant.model.client import ModelClient

# What a reply is judged on, in order: the same for a reply compared and a live answer.
CRITERIA = """it answers the question asked; what it says is right for the conversation; it is \
in the language of the question; it keeps the people and links that matter; it is short and \
readable in Slack."""

RUBRIC = f"""You judge a Slack assistant's reply against the reply it gave before (REFERENCE) \
to the same question. Judge CANDIDATE against REFERENCE on, in order: {CRITERIA} Answer with a \
JSON object only: {{"verdict": "better" | "as good" | "worse", "reason": "one sentence"}}."""

LIVE_RUBRIC = f"""You judge a Slack assistant's reply (ANSWER) to a question asked in a Slack \
thread. Judge ANSWER on, in order: {CRITERIA} Answer with a JSON object only: \
{{"verdict": "good" | "acceptable" | "poor", "reason": "one sentence"}}."""

# A trajectory case's (`assistant eval --trajectory`): the judge reads the whole path, each
# tool call with its arguments and each post, as the console trace shows them.
PATH_RUBRIC = f"""You judge a Slack assistant's whole answer, the path of tool calls it took \
(reading the thread, calling tools, posting, finishing), against the path it took before \
(REFERENCE) for the same question. Judge CANDIDATE against REFERENCE on, in order: it read or \
called what it needed and nothing it did not; its posts: {CRITERIA} Answer with a JSON object \
only: {{"verdict": "better" | "as good" | "worse", "reason": "one sentence"}}."""

Verdict = Literal["better", "as good", "worse"]
LiveVerdict = Literal["good", "acceptable", "poor"]
LIVE_VERDICTS: tuple[LiveVerdict, ...] = ("good", "acceptable", "poor")


class Judgement(BaseModel):
    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    reason: str = Field(max_length=2_000)


class LiveJudgement(BaseModel):
    model_config = ConfigDict(frozen=True)

    verdict: LiveVerdict
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
