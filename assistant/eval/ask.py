"""Asking a model configuration for the next step of a case: the prompt a run would build for
the log as it stood (the same budget, system message and tool schemas), one model call, its
tool calls parsed as the agent parses them. Nothing is carried out: no tool runs, no store is
written, nothing is posted."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Self

from assistant.eval.cases import Case
from assistant.model.attempts import ModelError
from assistant.model.client import ModelClient
from assistant.model.options import ModelOptions
from assistant.model.tool_calls import (
    TOOL_SCHEMAS,
    ToolCallError,
    parse_server_call,
    parse_tool_call,
)
from assistant.run.loop.prompt import PromptBudget
from assistant.run.tools.run_context import RunContext
from assistant.run.tools.toolbox import recorded_toolbox
from context.budget import BudgetError
from context.entry import Entry, SystemEntry, make_entry
from context.log import ContextLog
from context.toolcalls import ToolCall


@dataclass(frozen=True)
class Config:
    """What a case is run against: the model, its server, a persona and a temperature."""

    model: str
    base_url: str | None = None
    persona: str | None = None  # replaces entry 0 of every case's log
    persona_name: str | None = None  # where it came from, for reports
    temperature: float | None = None
    name: str = ""  # how reports name it (the model, unless told)
    instructions: str | None = None  # replaces the fixed system message of every call
    instructions_name: str | None = None

    @property
    def label(self) -> str:
        return self.name or self.model

    def describe(self) -> dict[str, object]:
        return {
            "name": self.label,
            "model": self.model,
            "base_url": self.base_url,
            "persona": self.persona_name,
            "temperature": self.temperature,
            "instructions": self.instructions_name,
        }


@dataclass(frozen=True)
class Answer:
    """What the model did with a case: its calls (or why each does not fit), or the failure."""

    calls: list[ToolCall | ToolCallError] = field(default_factory=list)
    text: str | None = None  # a plain-text answer (no tool call)
    failure: str | None = None  # the model could not be asked, or the prompt did not fit
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Asker:
    """One model client for a configuration: `async with Asker(…) as asker: await
    asker.ask(case)`; calls from many tasks at once share its connections."""

    def __init__(self, config: Config, options: ModelOptions, budget: PromptBudget) -> None:
        self.config = config
        self._options = replace(
            options,
            model=config.model,
            base_url=config.base_url if config.base_url is not None else options.base_url,
            temperature=config.temperature,
            instructions=config.instructions,
        )
        self._budget = budget
        self._model: ModelClient | None = None

    async def __aenter__(self) -> Self:
        self._model = ModelClient(self._options)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._model is not None:
            await self._model.close()

    async def ask(self, case: Case) -> Answer:
        assert self._model is not None, "use `async with`"
        entries = list(case.before)
        if self.config.persona is not None:
            try:
                entries = with_persona(entries, self.config.persona)
            except ValueError as exc:
                return Answer(failure=str(exc))
        extra = recorded_toolbox({}, case.log, _never).extra_schemas
        try:
            prompt = self._budget.with_tools(extra).prompts(ContextLog(entries)).next()
        except BudgetError as exc:
            return Answer(failure=f"the prompt does not fit the context budget: {exc}")
        try:
            tools = [*TOOL_SCHEMAS, *extra] if extra else None
            reply = await self._model.next_step(prompt.text, tools=tools)
        except ModelError as exc:
            return Answer(failure=f"the model call failed: {exc}")
        calls: list[ToolCall | ToolCallError] = []
        for raw in reply.calls:
            try:
                if any(raw.name == t["function"]["name"] for t in extra):
                    calls.append(parse_server_call(raw.name, raw.arguments))
                else:
                    calls.append(parse_tool_call(raw.name, raw.arguments))
            except ToolCallError as exc:
                calls.append(exc)
        return Answer(
            calls,
            reply.text if not reply.calls else None,
            prompt_tokens=reply.prompt_tokens or 0,
            completion_tokens=reply.completion_tokens or 0,
        )


def with_persona(entries: list[Entry], persona: str) -> list[Entry]:
    """The log with entry 0 (the persona, a system entry) replaced; ValueError when entry 0
    is not one."""
    first = entries[0]
    if not isinstance(first, SystemEntry):
        raise ValueError("entry 0 is not a persona (a system entry): it cannot be replaced")
    return [make_entry(0, first.turn, first.timestamp, persona), *entries[1:]]


async def _never(call: ToolCall, ctx: RunContext, index: int) -> str | None:
    raise AssertionError("an eval carries nothing out")
