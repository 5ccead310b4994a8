"""The real agent loop of bench/step.py with each piece of a step timed where it happens.

The real loop (`StepLoop.steps`) runs on the given SqlStore, a real Recorder and TraceWriter
(into memory), with an instant stub model and no-op Slack tools. The pieces are timed through
subclasses of the real classes: load (Recorder.entries), build (ContextLog.add and the run's
prompt builder), record (Recorder.record: the store append, then the trace block).

Timing the pieces inside the loop, not in a tight loop of their own, matters: a prompt of
megabytes is a fresh allocation each step, and what that costs (page faults) depends on
what else the process does in between.

NaivePrompts is the baseline: the prompt built the obvious way on every step.
"""

from __future__ import annotations

import asyncio
import io
import json
import resource
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from assistant.model.completion import ModelReply, RawToolCall
from assistant.model.limits import ModelLimits
from assistant.model.request import ImagePart, build_messages
from assistant.model.stream import ReplyEnded, StepEvent
from assistant.model.tool_calls import TOOL_SCHEMAS, Tools
from assistant.run.core.prompt import PromptBudget, RunPrompts
from assistant.run.core.recorder import Recorder
from assistant.run.core.run_context import RunContext, ToolFunction
from assistant.run.loop.agent import Agent
from assistant.settings.groups import ModelSettings
from bench.report import median
from context.budget import BuiltPrompt
from context.entry import Entry
from context.log import ContextLog
from context.storage import EntryMeta, ThreadKey
from context.storage.store import SqlStore
from context.trace import TraceWriter

KEY = ThreadKey("T0BENCH", "C0BENCH", "1700000000.000100")
PIECES = ("load", "build", "record", "append", "render", "faults")


class Clock:
    """Time spent in each piece since the last model call; one sample per step."""

    def __init__(self) -> None:
        self.current: dict[str, float] = defaultdict(float)
        self.steps: list[dict[str, float]] = []
        self.returned: float | None = None

    def add(self, piece: str, amount: float) -> None:
        self.current[piece] += amount

    def model_called(self, now: float) -> None:
        if self.returned is not None:  # the first window is the run's start, not a step
            self.steps.append({**self.current, "step": now - self.returned})
        self.current = defaultdict(float)

    def median(self, piece: str) -> float:
        return median([s.get(piece, 0.0) for s in self.steps])


class TimedLog(ContextLog):
    def __init__(self, entries: list[Entry], clock: Clock) -> None:
        self.clock = clock
        super().__init__(entries)

    def add(self, entry: Entry) -> None:
        started = time.perf_counter()
        super().add(entry)
        self.clock.add("build", time.perf_counter() - started)


class TimedPrompts(RunPrompts):
    """The real prompt builder of a run (within the default context budget), timed."""

    def __init__(self, budget: PromptBudget, log: ContextLog, clock: Clock) -> None:
        super().__init__(budget, log)
        self.clock = clock

    def next(self) -> BuiltPrompt:
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        started = time.perf_counter()
        built = self.build()
        self.clock.add("build", time.perf_counter() - started)
        self.clock.add("faults", resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults)
        return built

    def build(self) -> BuiltPrompt:
        return super().next()


class NaivePrompts(TimedPrompts):
    def build(self) -> BuiltPrompt:
        dicts = [entry.as_dict() for entry in self.log.entries]
        return BuiltPrompt(json.dumps(dicts, ensure_ascii=False, separators=(",", ":")), 0)


@dataclass(frozen=True)
class TimedBudget(PromptBudget):
    clock: Clock | None = None
    naive: bool = False

    def prompts(self, log: ContextLog) -> RunPrompts:
        assert self.clock is not None
        return (NaivePrompts if self.naive else TimedPrompts)(self, log, self.clock)


class TimedTrace(TraceWriter):
    def __init__(self, clock: Clock) -> None:
        super().__init__(io.StringIO(), colour=False)
        self.clock = clock

    def write(
        self, entry: Entry, key: ThreadKey | None = None, meta: EntryMeta | None = None
    ) -> None:
        started = time.perf_counter()
        super().write(entry, key, meta)
        self.clock.add("render", time.perf_counter() - started)


class TimedStore:
    """The real store; its append timed in the worker thread it runs in."""

    def __init__(self, store: SqlStore, clock: Clock) -> None:
        self._store, self._clock = store, clock

    def append(self, *args: Any, **kwargs: Any) -> Entry | None:
        started = time.perf_counter()
        entry = self._store.append(*args, **kwargs)
        self._clock.add("append", time.perf_counter() - started)
        return entry

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class TimedRecorder(Recorder):
    def __init__(self, store: SqlStore, clock: Clock) -> None:
        super().__init__(TimedStore(store, clock), TimedTrace(clock))
        self.clock = clock

    async def record(self, *args: Any, **kwargs: Any) -> Entry | None:
        started = time.perf_counter()
        entry = await super().record(*args, **kwargs)
        self.clock.add("record", time.perf_counter() - started)
        return entry

    async def entries(self, key: ThreadKey, start: int = 0) -> list[Entry]:
        started = time.perf_counter()
        found = await super().entries(key, start)
        self.clock.add("load", time.perf_counter() - started)
        return found


class InstantModel:
    """Stands in for ModelClient as the agent's StepModel (mypy checks it against that):
    answers postMessage at once, marking each step's end. It also times what the OpenAI client
    would do first with the prompt: encode the request body (json.dumps with the SDK's options,
    then UTF-8); that is reported on its own, as a cost of the model call rather than of the
    step."""

    where = "nowhere (an instant stand-in)"

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.prompt_bytes = 0
        self.encode: list[float] = []
        self.limits = ModelLimits()

    async def next_step(
        self,
        prompt_text: str,
        images: Sequence[ImagePart] = (),
        model: str | None = None,
        tools: Tools = TOOL_SCHEMAS,
        estimate: int | None = None,
    ) -> ModelReply:
        self.clock.model_called(time.perf_counter())
        started = time.perf_counter()
        body = {"model": "gpt-4o-mini", "messages": build_messages(prompt_text)}
        json.dumps({**body, "tools": tools}, ensure_ascii=False, separators=(",", ":"))
        self.encode.append(time.perf_counter() - started)
        self.prompt_bytes = self.prompt_bytes or len(prompt_text.encode())  # at the size
        arguments = json.dumps({"text": "Noted.", "reasoning": "Answering."})
        self.clock.returned = time.perf_counter()
        return ModelReply(calls=[RawToolCall("postMessage", arguments)], model="stub")

    async def stream_step(
        self,
        prompt_text: str,
        images: Sequence[ImagePart] = (),
        model: str | None = None,
        tools: Tools = TOOL_SCHEMAS,
        estimate: int | None = None,
    ) -> AsyncIterator[StepEvent]:
        """The whole reply at once, as ModelClient gives that of a server that does not
        stream (the benchmark's agent posts whole texts, so it never asks for this)."""
        yield ReplyEnded(await self.next_step(prompt_text, images, model, tools, estimate))

    async def window(self, model: str | None) -> None:
        """No server: no window but the configured one."""
        return None


async def _no_slack(call: object, ctx: RunContext, index: int) -> None:
    return None


@dataclass(frozen=True)
class Loop:
    """The medians of one timed run of the real loop."""

    size: int
    prompt_bytes: int
    pieces: dict[str, float]
    encode: float


def time_loop(store: SqlStore, size: int, steps: int, naive: bool) -> Loop:
    clock = Clock()
    recorder = TimedRecorder(store, clock)
    model = InstantModel(clock)
    tools: dict[str, ToolFunction] = {
        "postMessage": _no_slack,
        "getThreadHistory": _no_slack,
        "finishRequest": _no_slack,
    }
    default = ModelSettings(_env_file=None).prompt_budget()
    budget = TimedBudget(default.tokens, default.counter, clock=clock, naive=naive)
    # InstantModel stands in for ModelClient: the one call the loop makes, without the network.
    agent = Agent(recorder, model, steps + 1, budget, tools=tools)

    async def go() -> None:
        log = TimedLog(await recorder.entries(KEY), clock)
        await agent.step_loop.steps(RunContext(KEY, None, None, "<@U0FAKEBOT1>", log, store))

    asyncio.run(go())
    pieces = {piece: clock.median(piece) for piece in (*PIECES, "step")}
    return Loop(size, model.prompt_bytes, pieces, median(model.encode))
