"""Running cases against a configuration: each case `trials` times, at most `concurrency`
model calls at once, the cases read as they are needed (a few times `concurrency` held at
most), each case's result handed on in the cases' order as soon as it and those before it
ended, and kept small: its scores and two rendered steps, not its log. Nothing keeps the
results: the caller spools them (`assistant/eval/spool.py`) and keeps only the `Totals`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from pydantic import TypeAdapter, ValidationError

from assistant.eval.ask import Answer, Config
from assistant.eval.cases import Case, Feedback
from assistant.eval.scores import Trial, judged, kind_of, posts, question_of, score, wilson
from assistant.eval.trajectory import Match, paths, score_trajectory
from assistant.model.judging import PATH_RUBRIC, RUBRIC, Judge
from assistant.model.tool_calls import ToolCallError
from assistant.run.core.post_limits import PostCaps
from context.entry import make_entry
from context.render import printable, render_entry
from context.toolcalls import AssistantContent, ToolCall

_CALL: TypeAdapter[ToolCall] = TypeAdapter(AssistantContent)
ENDED_CHARS = 2_000  # how a trajectory ended: a word, or the run's one-line reason


class Asks(Protocol):
    """What asks a case: `Asker` (the model), or a saved run's answers (rescore)."""

    config: Config

    def model_of(self, case: Case) -> str | None: ...

    async def ask(self, case: Case) -> Answer: ...


@dataclass
class CaseResult:
    """One case's trials under one configuration."""

    number: int  # its place among the cases read
    id: str
    feedback: Feedback | None
    reference_kind: str
    reference_shown: str  # the recorded step, as the console trace shows it
    trials: list[Trial] = field(default_factory=list)
    answer_shown: str = ""  # one trial's step: the first that failed, else the first
    # Each trial's answer (`answer_json`), kept for a saved run (`--save-run`) to be
    # scored again without asking the model (`assistant eval rescore`).
    answers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passes(self) -> int:
        return sum(trial.passed for trial in self.trials)

    @property
    def pass_at_1(self) -> float:
        return self.passes / len(self.trials) if self.trials else 0.0

    @property
    def pass_all(self) -> bool:
        """pass^k: every one of its k trials passed."""
        return bool(self.trials) and self.passes == len(self.trials)

    def spooled(self) -> dict[str, Any]:
        """All of it, as `unspooled` reads it back."""
        return asdict(self)

    @classmethod
    def unspooled(cls, data: dict[str, Any]) -> CaseResult:
        trials = [Trial(**(t | {"problems": tuple(t["problems"])})) for t in data["trials"]]
        return cls(**(data | {"trials": trials}))

    def as_json(self) -> dict[str, Any]:
        low, high = wilson(self.passes, len(self.trials))
        return {
            "case": self.id,
            "feedback": self.feedback,
            "reference_kind": self.reference_kind,
            "trials": len(self.trials),
            "passes": self.passes,
            "pass@1": round(self.pass_at_1, 4),
            "pass^k": self.pass_all,
            "interval": [round(low, 4), round(high, 4)] if len(self.trials) > 1 else None,
            "scores": [
                {
                    "kind": t.kind,
                    "valid": t.valid,
                    "same_kind": t.same_kind,
                    "passed": t.passed,
                    "problems": list(t.problems),
                    "checks": t.checks,
                    "verdict": t.verdict,
                    "reason": t.reason,
                }
                for t in self.trials
            ],
            "reference": self.reference_shown,
            "answer": self.answer_shown,
        }


@dataclass
class Totals:
    """The run's figures over every case."""

    cases: int = 0
    trials: int = 0
    passes: int = 0
    all_passed: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    stopped: str | None = None  # why the run ended before its last case (`Limits`)

    def add(self, result: CaseResult) -> None:
        self.cases += 1
        self.trials += len(result.trials)
        self.passes += result.passes
        self.all_passed += result.pass_all
        self.errors += sum(trial.failed for trial in result.trials)

    @property
    def pass_at_1(self) -> float:
        return self.passes / self.trials if self.trials else 0.0

    @property
    def pass_k(self) -> float:
        return self.all_passed / self.cases if self.cases else 0.0

    def as_json(self, k: int) -> dict[str, Any]:
        figures: dict[str, Any] = {
            "cases": self.cases,
            "trials_per_case": k,
            "pass@1": round(self.pass_at_1, 4),
            "pass^k": round(self.pass_k, 4),
            "errors": self.errors,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }
        if self.stopped is not None:
            figures["stopped"] = self.stopped
        if k > 1:
            figures["pass@1_interval"] = [round(v, 4) for v in wilson(self.passes, self.trials)]
            figures["pass^k_interval"] = [round(v, 4) for v in wilson(self.all_passed, self.cases)]
        return figures


@dataclass
class Limits:
    """A run's hard stops (`--max-tokens`, `--max-cost`) and its trials per case (more for
    a case people gave a 👎: `--trials-beat`). Once the run has used `max_tokens` (prompt
    and answer) or spent `max_cost`, no trial is begun: the trials under way end, the cases
    that had all their trials are the run's results, and `Totals.stopped` says why."""

    max_tokens: int | None = None
    max_cost: float | None = None
    # A trial's cost: (the model asked, its answer) -> dollars, None when it has no price.
    cost_of: Callable[[str, Answer], float | None] | None = None
    beat_trials: int | None = None
    cost: float = 0.0
    unpriced: str | None = None  # a model asked that has no price: --max-cost cannot hold

    def trials_of(self, case: Case, trials: int) -> int:
        return self.beat_trials if case.feedback == "beat" and self.beat_trials else trials

    def spent(self, model: str, answer: Answer) -> None:
        if self.cost_of is None:
            return
        cost = self.cost_of(model, answer)
        if cost is None:
            self.unpriced = model
        else:
            self.cost += cost

    def reached(self, totals: Totals) -> str | None:
        used = totals.prompt_tokens + totals.completion_tokens
        if self.max_tokens is not None and used >= self.max_tokens:
            return f"--max-tokens {self.max_tokens} reached ({used:,} tokens used)"
        if self.max_cost is not None and self.unpriced is not None:
            return f"--max-cost: no price for {self.unpriced} in ASSISTANT_PRICES"
        if self.max_cost is not None and self.cost >= self.max_cost:
            return f"--max-cost {self.max_cost:g} reached (${self.cost:,.4f} spent)"
        return None


def answer_json(answer: Answer) -> dict[str, Any]:
    """An answer as a saved run keeps it: each call as the log would hold it, or the reason
    it is not a usable call."""
    calls = [
        {"error": str(call)}
        if isinstance(call, ToolCallError)
        else {"call": call.model_dump(mode="json")}
        for call in answer.calls
    ]
    found: dict[str, Any] = {
        "calls": calls,
        "text": answer.text,
        "failure": answer.failure,
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
    }
    if answer.steps is not None:  # a trajectory's: how long it went and how it ended
        found |= {"steps": answer.steps, "ended": answer.ended}
    return found


def answer_of(data: object) -> Answer:
    """An answer `answer_json` wrote, checked (it is read from a file); ValueError saying
    what is wrong."""
    if not isinstance(data, dict) or not isinstance(data.get("calls"), list):
        raise ValueError("an answer must be an object with `calls`")
    calls: list[ToolCall | ToolCallError] = []
    for item in data["calls"]:
        if isinstance(item, dict) and isinstance(item.get("error"), str):
            calls.append(ToolCallError(item["error"]))
            continue
        try:
            found = item.get("call") if isinstance(item, dict) else item
            calls.append(_CALL.validate_python(found))
        except ValidationError as exc:
            raise ValueError(f"not a tool call: {exc.errors()[0]['msg']}") from None
    text, failure = data.get("text"), data.get("failure")
    tokens = data.get("prompt_tokens"), data.get("completion_tokens")
    if not all(v is None or isinstance(v, str) for v in (text, failure)):
        raise ValueError("an answer's `text` and `failure` must be strings or null")
    if not all(type(v) is int and v >= 0 for v in tokens):
        raise ValueError("an answer's token counts must be whole numbers")
    steps, ended = data.get("steps"), data.get("ended")
    if not (steps is None or (type(steps) is int and steps >= 0)):
        raise ValueError("an answer's `steps` must be null or a whole number")
    if not (ended is None or (isinstance(ended, str) and len(ended) <= ENDED_CHARS)):
        raise ValueError("an answer's `ended` must be null or a short string")
    return Answer(calls, text, failure, *tokens, steps=steps, ended=ended)  # type: ignore[arg-type]


def shown_step(case: Case, answer: Answer) -> str:
    """The answer as the console trace would show it, had it been recorded at the case's
    place; what is not a usable call is said in a line of its own."""
    if answer.failure is not None:
        return printable(f"⚠️ {answer.failure}")
    if not answer.calls:
        return printable(f'⚠️ answered in plain text: "{answer.text or ""}"')
    first = case.reference[0]
    blocks = []
    for offset, call in enumerate(answer.calls):
        if isinstance(call, ToolCallError):
            blocks.append(printable(f"⚠️ {call}"))
        else:
            entry = make_entry(case.at + offset, first.turn, first.timestamp, call)
            blocks.append(render_entry(entry))
    return "\n\n".join(blocks)


async def run_cases(
    cases: Iterable[Case],
    asker: Asks,
    trials: int,
    concurrency: int,
    caps: PostCaps,
    done: Callable[[CaseResult], None],
    totals: Totals,
    judge: Judge | None = None,
    shown: bool = True,
    limits: Limits | None = None,
    keep_answers: bool = False,
    match: Match | None = None,
) -> None:
    """Each case's result to `done`, in the order the cases came, added to `totals`.
    `shown`: keep each case's two steps rendered (for --json and the report);
    `keep_answers`: each trial's answer too (for a saved run). Stopped by `limits`, the
    cases that had all their trials are handed on and `totals.stopped` says why.
    `match`: the cases are trajectories, scored by trajectory match and judged on their
    whole paths (`assistant/eval/trajectory.py`)."""
    limits = limits or Limits()
    units = _units(cases, trials, limits)
    open_cases: dict[int, tuple[Case, CaseResult]] = {}
    ended: dict[int, CaseResult] = {}  # cases that ended before one that came earlier
    next_out = 0
    # A slow case holds back the results after it: no new case is begun while this many
    # wait. At least 2, so the case that holds them back can always take its next trial
    # (only the newest case has trials not yet taken).
    window = max(2, 4 * concurrency)
    room = asyncio.Condition()

    def hand_on(number: int, result: CaseResult) -> None:
        nonlocal next_out
        ended[number] = result
        while next_out in ended:
            out = ended.pop(next_out)
            totals.add(out)
            done(out)
            next_out += 1

    async def worker() -> None:
        while True:
            async with room:
                await room.wait_for(lambda: len(open_cases) + len(ended) < window)
                unit = next(units, None) if totals.stopped is None else None
                reason = limits.reached(totals) if unit is not None else None
                if reason is not None:  # only a run with trials left is cut short
                    totals.stopped, unit = reason, None
                if unit is None:
                    return
                number, case, first = unit
                if first:
                    reference = (
                        "\n\n".join(render_entry(entry) for entry in case.reference)
                        if shown
                        else ""
                    )
                    kind = kind_of(case.reference[0].content)
                    open_cases[number] = (
                        case,
                        CaseResult(number, case.id, case.feedback, kind, reference),
                    )
            answer = await asker.ask(case)
            if match is not None:
                trial = score_trajectory(case, answer, caps, match)
                compared = paths(case, answer) if judge is not None else None
            else:
                trial = score(case, answer, caps)
                compared = posts(case, answer) if judge is not None else None
            if judge is not None and compared is not None:
                rubric = PATH_RUBRIC if match is not None else RUBRIC
                judgement = await judge.judge(question_of(case), *compared, rubric)
                trial = judged(case, trial, judgement)
            result = open_cases[number][1]
            totals.prompt_tokens += answer.prompt_tokens
            totals.completion_tokens += answer.completion_tokens
            limits.spent(asker.model_of(case) or asker.config.model, answer)
            if keep_answers:
                result.answers.append(answer_json(answer))
            first_failure = not trial.passed and result.pass_all
            if shown and (not result.trials or first_failure):
                result.answer_shown = shown_step(case, answer)
            result.trials.append(trial)
            if len(result.trials) == limits.trials_of(case, trials):
                async with room:
                    del open_cases[number]
                    hand_on(number, result)
                    room.notify_all()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    if totals.stopped is not None:
        # Cases that ended after one left with only some of its trials: handed on in order;
        # a case cut short is not a result (its k trials are what pass^k means).
        for number in sorted(ended):
            totals.add(ended[number])
            done(ended[number])


def _units(cases: Iterable[Case], trials: int, limits: Limits) -> Iterator[tuple[int, Case, bool]]:
    """(case number, case, whether it is the case's first trial), each case its trials in
    a row: the workers share this one iterator, so a case is read only when one is free."""
    for number, case in enumerate(cases):
        for trial in range(limits.trials_of(case, trials)):
            yield number, case, trial == 0
