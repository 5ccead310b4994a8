"""Trajectory cases (`assistant eval --trajectory`, docs/evaluation.md "Trajectory cases"):
from a person's message, the model is run onward step by step by the run's own agent loop
(`Agent`: the same prompt, budget, tool schemas and call parsing), on a scratch store, with
tools answered from the recording and nothing carried out; the path it takes is scored
against the recorded one by trajectory match.

The recording is the case's recorded answer: the tool calls from its first step to its
finishRequest (or to the next person's message), each with the result recorded after it. A
read (getThreadHistory, expandEntry, searchSlack) or an MCP tool's call gets the result of the
first recorded call of the same tool with the same arguments (`arguments_of`: its reasoning
aside; getThreadHistory's order and its limit as the run applies it, default 20); any other
call is answered `NOT_AVAILABLE`. A post is recorded into the path, never sent; a tool that
changes something is never called."""

from __future__ import annotations

import json
import math
import tempfile
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

from assistant.eval.ask import Answer, Asker, Config, with_persona
from assistant.eval.cases import Case, feedback_of
from assistant.eval.scores import Trial, kind_of, post_checks
from assistant.eval.scores import _over_caps as over_caps
from assistant.model.client import ModelClient
from assistant.model.completion import ModelReply
from assistant.model.limits import ModelLimits, ServerWindow
from assistant.model.request import ImagePart
from assistant.model.stream import StepEvent
from assistant.model.tool_calls import TOOL_SCHEMAS, Tools
from assistant.run.approvals.entries import BEFORE_RESULT
from assistant.run.core.post_limits import PostCaps
from assistant.run.core.prompt import PromptBudget
from assistant.run.core.recorder import Recorder
from assistant.run.core.requests import AnswerRequest
from assistant.run.core.run_context import RunContext, ToolFunction
from assistant.run.loop.agent import Agent
from assistant.run.tools.finish_request import finish_request
from assistant.run.tools.toolbox import recorded_toolbox
from context.entry import (
    FAILURE_PREFIX,
    AssistantEntry,
    Entry,
    SystemEntry,
    UserEntry,
    make_entry,
)
from context.render import render_entry
from context.storage import Store, ThreadKey, Vote, open_store
from context.toolcalls import (
    HISTORY_DEFAULT_LIMIT,
    FinishRequest,
    GetThreadHistory,
    PostMessage,
    ServerToolCall,
    ToolCall,
)
from context.trace import NoTrace

Mode = Literal["strict", "unordered", "subset", "superset"]
MODES: tuple[Mode, ...] = ("strict", "unordered", "subset", "superset")
DEFAULT_LENGTH_FACTOR = 2.0

NOT_AVAILABLE = (
    "Not available in this evaluation: the recorded answer has no result for {name} with "
    "these arguments."
)
# The step loop's own ending at its cap (assistant/run/loop/step_loop.py).
_STEP_CAP = "stopped after "


@dataclass(frozen=True)
class Match:
    """How a trajectory is scored: the mode, and whether the calls' arguments count."""

    mode: Mode = "strict"
    arguments: bool = False

    def describe(self) -> dict[str, object]:
        return {"match": self.mode, "match_args": self.arguments}


def arguments_of(call: ToolCall) -> dict[str, Any]:
    """What two calls of one tool must share to be the same call: the arguments, the
    reasoning aside (it is the model's note, not the call). A post's text is not compared
    (the post checks and the judge read it); getThreadHistory's limit as the run applies it."""
    if isinstance(call, ServerToolCall):
        return dict(call.arguments)
    if isinstance(call, PostMessage):
        return {}
    if isinstance(call, GetThreadHistory):
        return {"ascending": call.ascending, "limit": call.limit or HISTORY_DEFAULT_LIMIT}
    return call.model_dump(mode="json", exclude={"toolCall", "reasoning"})


def step_key(call: ToolCall, with_arguments: bool) -> str:
    """One step as the match compares it: its tool, and with `with_arguments` its
    arguments (canonical JSON)."""
    if not with_arguments:
        return call.called
    shown = json.dumps(arguments_of(call), sort_keys=True, ensure_ascii=False)
    return f"{call.called} {shown}"


def matches(reference: Sequence[ToolCall], candidate: Sequence[ToolCall], match: Match) -> bool:
    """Trajectory match, as LangSmith's agentevals defines the modes, each call counted as
    often as it is made:

    - strict: the same calls in the same order;
    - unordered: the same calls, in any order;
    - subset: every call the candidate made is one of the reference's (it did nothing the
      reference did not, and may have done less);
    - superset: the candidate made every call of the reference (and may have made more)."""
    ref = [step_key(call, match.arguments) for call in reference]
    new = [step_key(call, match.arguments) for call in candidate]
    if match.mode == "strict":
        return ref == new
    if match.mode == "unordered":
        return Counter(ref) == Counter(new)
    if match.mode == "subset":
        return not Counter(new) - Counter(ref)
    return not Counter(ref) - Counter(new)


def trajectory_cases(
    source: str,
    entries: Sequence[Entry],
    votes: Sequence[Vote] = (),
    model: str | None = None,
) -> Iterator[Case]:
    """A case per person's message that the recording answers: the log up to the answer's
    first step, and as the reference every tool call from it to its finishRequest (or to
    the next person's message)."""
    asked = False  # a person's message came, and its answer has not ended
    calls: list[AssistantEntry] = []

    def case() -> Case:
        indexes = [entry.index for entry in calls]
        at = calls[0].index
        return Case(source, entries, at, tuple(calls), feedback_of(indexes, votes), model)

    for entry in entries:
        if isinstance(entry, UserEntry):
            if calls:
                yield case()
            asked, calls = True, []
        elif isinstance(entry, AssistantEntry) and asked:
            calls.append(entry)
            if isinstance(entry.content, FinishRequest):
                # What follows before the next person's message is not this answer.
                yield case()
                asked, calls = False, []
    if calls:
        yield case()


def recorded_results(case: Case) -> list[tuple[ToolCall, str]]:
    """The recorded answer's calls with their results, in order: the entry after each call
    that is not an approval's wait (an approval's result says if it was denied)."""
    log = case.log
    last = case.reference[-1].index
    found: list[tuple[ToolCall, str]] = []
    for entry in case.reference:
        after = next(
            (
                e
                for e in log[entry.index + 1 : last + 2]
                if not (isinstance(e, SystemEntry) and e.content.startswith(BEFORE_RESULT))
            ),
            None,
        )
        if isinstance(after, SystemEntry):
            found.append((entry.content, after.content))
    return found


class RecordedTools:
    """One trial's tools: every read and MCP call answered from the recording."""

    def __init__(self, case: Case) -> None:
        self._results = recorded_results(case)

    def result(self, call: ToolCall) -> str:
        wanted = (call.called, arguments_of(call))
        for was, result in self._results:
            if (was.called, arguments_of(was)) == wanted:
                return result
        return NOT_AVAILABLE.format(name=call.called)

    async def answered(self, call: ToolCall, ctx: RunContext, index: int) -> str | None:
        return self.result(call)

    def tools(self) -> dict[str, ToolFunction]:
        return {
            "postMessage": _not_sent,
            "getThreadHistory": self.answered,
            "expandEntry": self.answered,
            "searchSlack": self.answered,
            "finishRequest": finish_request,
        }


async def _not_sent(call: ToolCall, ctx: RunContext, index: int) -> str | None:
    return None  # recorded into the path by the loop: the path's answer, never posted


class TrajectoryAsker(Asker):
    """Asks a configuration each case as a whole answer: the run's `Agent` on a scratch
    store (one thread a trial), the model called through the caller's client, its path
    returned as the answer's calls. Use it `with`: the scratch store lives until then."""

    def __init__(
        self,
        config: Config,
        model: ModelClient,
        budget_of: Callable[[str], PromptBudget],
        max_steps: int,
        length_factor: float = DEFAULT_LENGTH_FACTOR,
        caps: PostCaps | None = None,
    ) -> None:
        super().__init__(config, model, budget_of)
        self.max_steps, self.length_factor = max_steps, length_factor
        self._caps = caps or PostCaps()
        self._client = model
        self._numbers = count(1)
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._store: Store | None = None

    def __enter__(self) -> Self:
        self._scratch = tempfile.TemporaryDirectory(prefix="assistant-eval-")
        self._store = open_store(f"sqlite:///{Path(self._scratch.name) / 'eval.db'}")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._store is not None:
            self._store.close()
        if self._scratch is not None:
            self._scratch.cleanup()

    def cap_of(self, case: Case) -> tuple[int, str]:
        """The trial's step cap and what set it: --max-steps, or the recorded answer's
        length (its calls) times --length-factor, whichever is lower."""
        by_length = max(1, math.ceil(len(case.reference) * self.length_factor))
        if by_length < self.max_steps:
            return by_length, "length"
        return self.max_steps, "step cap"

    async def ask(self, case: Case) -> Answer:
        assert self._store is not None, "use `with`"
        entries = list(case.before)
        if self.config.persona is not None:
            try:
                entries = with_persona(entries, self.config.persona)
            except ValueError as exc:
                return Answer(failure=str(exc))
        model = self.model_of(case)
        budget = self._budget(model or self.config.model)
        key = ThreadKey("eval", "trajectory", str(next(self._numbers)))
        recorder = Recorder(self._store, NoTrace())
        store = recorder.store
        # The store's writes run in the recorder's threads, as a run's do: the other trials'
        # steps go on meanwhile.
        await recorder.call(_write_log, store, key, entries)
        path = RecordedTools(case)
        cap, capped_by = self.cap_of(case)
        box = recorded_toolbox(path.tools(), case.log, path.answered, search=True)
        agent = Agent(
            recorder,
            _ChannelModel(self._client, model) if model is not None else self._client,
            max_steps=cap,
            budget=budget,
            tools=path.tools(),
            post_caps=self._caps,
            fixed_tools=box,
        )
        await agent.run(key, [AnswerRequest(index=len(entries) - 1, message_ts="")])
        added = await recorder.read(store.entries, key, len(entries))
        figures = await recorder.read(store.metadata, key, len(entries))
        prompt_tokens = sum(meta.prompt_tokens or 0 for meta in figures)
        completion_tokens = sum(meta.completion_tokens or 0 for meta in figures)
        steps = sum(meta.model is not None for meta in figures)
        calls: list[ToolCall] = [e.content for e in added if isinstance(e, AssistantEntry)]
        last = added[-1] if added else None
        finished = any(isinstance(call, FinishRequest) for call in calls)
        ended = "finishRequest" if finished else "no finishRequest"
        failure = None
        if isinstance(last, SystemEntry) and last.content.startswith(FAILURE_PREFIX):
            reason = last.content.removeprefix(FAILURE_PREFIX).split("\n", 1)[0]
            if reason.startswith(_STEP_CAP):
                ended = capped_by
            else:
                # The model could not be asked, or the prompt did not fit: not a result.
                failure = reason
        return Answer(
            list(calls),
            None,
            failure,
            prompt_tokens,
            completion_tokens,
            steps=steps,
            ended=ended,
        )


def _write_log(store: Store, key: ThreadKey, entries: Sequence[Entry]) -> None:
    """The log before the case, in a new scratch thread: the same rules place each entry at
    the same index and turn."""
    for entry in entries:
        store.append(key, entry.content, entry.timestamp)


class _ChannelModel:
    """The caller's model client, asking a channel's own model (as a run in that channel
    would) at every step."""

    def __init__(self, client: ModelClient, model: str) -> None:
        self._client, self._model = client, model

    @property
    def where(self) -> str:
        return self._client.where

    @property
    def limits(self) -> ModelLimits:
        return self._client.limits

    async def window(self, model: str | None) -> ServerWindow | None:
        return await self._client.window(model or self._model)

    async def next_step(
        self,
        prompt_text: str,
        images: Sequence[ImagePart] = (),
        model: str | None = None,
        tools: Tools = TOOL_SCHEMAS,
        estimate: int | None = None,
    ) -> ModelReply:
        return await self._client.next_step(
            prompt_text, images, model or self._model, tools, estimate
        )

    def stream_step(
        self,
        prompt_text: str,
        images: Sequence[ImagePart] = (),
        model: str | None = None,
        tools: Tools = TOOL_SCHEMAS,
        estimate: int | None = None,
    ) -> AsyncIterator[StepEvent]:
        return self._client.stream_step(prompt_text, images, model or self._model, tools, estimate)


def score_trajectory(case: Case, answer: Answer, caps: PostCaps, match: Match) -> Trial:
    """A trajectory trial: valid (a path the model could take, its posts within the caps),
    matched against the recorded path by `match`, and a post in the question's language.
    A recorded answer people gave a 👎 is one to beat: the same path posting the same text
    again does not pass."""
    if answer.failure is not None:
        return Trial("error", False, False, False, (answer.failure,))
    calls = [call for call in answer.calls if isinstance(call, ToolCall)]
    if not calls:
        return Trial("text", False, False, False, ("the path has no step",))
    problems = over_caps(calls, caps)
    if answer.ended not in (None, "finishRequest"):
        problems_note = f"ended without finishRequest: {answer.ended}"
    else:
        problems_note = None
    reference = [entry.content for entry in case.reference]
    matched = matches(reference, calls, match)
    checks = post_checks(case, calls) | {
        "path": [call.called for call in calls],
        "steps": answer.steps,
        "ended": answer.ended,
    }
    valid = not problems
    if case.feedback == "beat":
        same = matches(reference, calls, Match("strict", match.arguments)) and _posts(
            calls
        ) == _posts(reference)
        wanted = not same
    else:
        wanted = matched
    passed = valid and wanted and checks.get("language_kept") is not False
    notes = (*problems, *([problems_note] if problems_note else []))
    return Trial(kind_of(calls[0]), valid, matched, passed, notes, checks)


def path_text(case: Case, calls: Sequence[ToolCall]) -> str:
    """A path as the judge reads it: each call as the console trace shows it."""
    first = case.reference[0]
    return "\n\n".join(
        render_entry(make_entry(case.at + offset, first.turn, first.timestamp, call))
        for offset, call in enumerate(calls)
    )


def paths(case: Case, answer: Answer) -> tuple[str, str] | None:
    """(the recorded path, the answer's): what the judge compares in a trajectory case."""
    calls = [call for call in answer.calls if isinstance(call, ToolCall)]
    if answer.failure is not None or not calls:
        return None
    return path_text(case, [entry.content for entry in case.reference]), path_text(case, calls)


def _posts(calls: Sequence[ToolCall]) -> str:
    return "\n".join(call.text for call in calls if isinstance(call, PostMessage)).strip()
