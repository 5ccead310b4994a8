"""How a trial is scored, offline (docs/architecture.md#eval, docs/evaluation.md, "Evaluating a
change"):

- valid: every call is a tool the model was offered, with arguments of its schema
  (`parse_tool_call`, as the agent takes them), and its posts within the caps a reply has
  (`PostLimits`, the app's own rule); a plain-text answer or a failed call is not valid;
- same kind: its first call is the same kind of step as the reference's (post, read history,
  expand, finish);
- for posts, the language of the question kept (`language.py`'s rough guess, left out when
  it cannot tell); where the reference posted, the people and links it named kept, and the
  length against it (reported, not part of passing).

A trial passes when it is valid, of the same kind, and posts (if it does) in the question's
language when that can be told; a step people gave a 👎 (to beat) passes only when it is valid
and not the same step again (another kind, or another text). With a judge, a post where the
reference posted passes when the judge finds it as good or better (better, for a step to
beat)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from assistant.eval.ask import Answer
from assistant.eval.cases import Case
from assistant.eval.language import language_of
from assistant.model.judging import JudgeFailed, Judgement
from assistant.model.tool_calls import ToolCallError
from assistant.run.core.post_limits import PostCaps, PostLimits
from context.entry import UserEntry
from context.toolcalls import PostMessage, ToolCall

KINDS = {
    "postMessage": "post",
    "getThreadHistory": "read history",
    "expandEntry": "expand",
    "finishRequest": "finish",
    "searchSlack": "search",
}
MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
LINK = re.compile(r"https?://[^\s<>|]+")


def kind_of(call: ToolCall) -> str:
    return KINDS.get(call.called, call.called)


@dataclass(frozen=True)
class Trial:
    """One trial's score."""

    kind: str  # the kind of its first call; "error", "text", "invalid call"
    valid: bool
    same_kind: bool
    passed: bool
    problems: tuple[str, ...] = ()
    checks: dict[str, object] = field(default_factory=dict)  # the posts' offline checks
    verdict: str | None = None  # the judge's: better, as good, worse
    reason: str | None = None  # the judge's reason
    judge_failed: bool = False

    @property
    def failed(self) -> bool:
        """Whether a model could not be asked (the trial's or the judge's): not a result."""
        return self.kind == "error" or self.judge_failed


def score(case: Case, answer: Answer, caps: PostCaps) -> Trial:
    reference_kind = kind_of(case.reference[0].content)
    if answer.failure is not None:
        return Trial("error", False, False, False, (answer.failure,))
    if not answer.calls:
        return Trial("text", False, False, False, ("answered in plain text, not a tool call",))
    problems = [str(call) for call in answer.calls if isinstance(call, ToolCallError)]
    calls = [call for call in answer.calls if not isinstance(call, ToolCallError)]
    problems += _over_caps(calls, caps)
    first = answer.calls[0]
    kind = "invalid call" if isinstance(first, ToolCallError) else kind_of(first)
    valid = not problems
    same = kind == reference_kind
    checks = post_checks(case, calls)
    # A step people gave a 👎 is one to beat: the same step again does not pass.
    wanted = not _same_step(case, calls) if case.feedback == "beat" else same
    passed = valid and wanted and checks.get("language_kept") is not False
    return Trial(kind, valid, same, passed, tuple(problems), checks)


def judged(case: Case, trial: Trial, judgement: Judgement | JudgeFailed) -> Trial:
    """The trial with the judge's verdict: then a post passes when valid and not worse than
    the reference (better, for a step to beat)."""
    if isinstance(judgement, JudgeFailed):
        problems = (*trial.problems, judgement.why)
        return replace(trial, passed=False, problems=problems, judge_failed=True)
    wanted = ("better",) if case.feedback == "beat" else ("better", "as good")
    kept = trial.checks.get("language_kept") is not False
    passed = trial.valid and kept and judgement.verdict in wanted
    return replace(trial, passed=passed, verdict=judgement.verdict, reason=judgement.reason)


def posts(case: Case, answer: Answer) -> tuple[str, str] | None:
    """(the reference's post, the answer's) when both post: what the judge compares."""
    calls = [call for call in answer.calls if not isinstance(call, ToolCallError)]
    new, old = _posts(calls), _posts([entry.content for entry in case.reference])
    return (old, new) if new and old else None


def question_of(case: Case) -> str:
    """The newest person's message before the decision."""
    for entry in reversed(case.before):
        if isinstance(entry, UserEntry):
            return entry.content.text
    return ""


def _over_caps(calls: Sequence[ToolCall], caps: PostCaps) -> list[str]:
    limits = PostLimits(caps)
    problems = []
    for call in calls:
        if not isinstance(call, PostMessage):
            continue
        messages = len(limits.chunks(call.text))
        refusal = limits.refusal(call.text, messages)
        if refusal is not None:
            problems.append(f"a post over the caps: {refusal}")
            continue
        people = set(MENTION.findall(call.text))
        if len(people) > caps.people_per_message:
            problems.append(
                f"a post mentions {len(people)} people, more than "
                f"{caps.people_per_message} (ASSISTANT_MAX_MENTIONS_PER_MESSAGE)"
            )
        limits.charge(call.text, messages)
    return problems


def _posts(calls: Sequence[ToolCall]) -> str:
    return "\n".join(call.text for call in calls if isinstance(call, PostMessage))


def _same_step(case: Case, calls: Sequence[ToolCall]) -> bool:
    """The same kind of step, posting the same text (a finishRequest after it or not)."""
    reference = [entry.content for entry in case.reference]
    if not calls or kind_of(calls[0]) != kind_of(reference[0]):
        return False
    return _posts(calls).strip() == _posts(reference).strip()


def post_checks(case: Case, calls: Sequence[ToolCall]) -> dict[str, object]:
    """For a step that posts: whether it keeps the question's language (when both can be
    told); where the reference posted too, the people and links it named kept, and the length
    against it."""
    new = _posts(calls)
    if not new:
        return {}
    checks: dict[str, object] = {}
    asked, said = language_of(question_of(case)), language_of(new)
    if asked is not None and said is not None:
        checks["language_kept"] = asked == said
    old = _posts([entry.content for entry in case.reference])
    if old:
        checks["people_kept"] = set(MENTION.findall(old)) <= set(MENTION.findall(new))
        checks["links_kept"] = set(LINK.findall(old)) <= set(LINK.findall(new))
        checks["length_ratio"] = round(len(new) / len(old), 2)
    return checks


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval (95% by default) of a rate seen `successes` times in
    `trials`: unlike ± a normal error it stays within 0 to 1 and is not 0 wide at 0 or 1."""
    if trials == 0:
        return (0.0, 1.0)
    rate = successes / trials
    denominator = 1 + z * z / trials
    centre = (rate + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))
