"""Asking a model configuration for the next step of a case: the prompt a run would build for
the log as it stood (the same budget, system message and tool schemas), one model call, its
tool calls parsed as the agent parses them. Nothing is carried out: no tool runs, no store is
written, nothing is posted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from assistant.eval.cases import Case
from assistant.model.attempts import ModelError
from assistant.model.client import ModelClient
from assistant.model.options import ModelOptions
from assistant.model.tool_calls import (
    ToolCallError,
)
from assistant.run.core.prompt import PromptBudget
from assistant.run.core.run_context import RunContext
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
    # No model was named: a case from a channel with a model of its own is asked of it.
    channel_models: bool = False

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
            "channel_models": self.channel_models,
        }


@dataclass(frozen=True)
class Answer:
    """What the model did with a case: its calls (or why each does not fit), or the failure."""

    calls: list[ToolCall | ToolCallError] = field(default_factory=list)
    text: str | None = None  # a plain-text answer (no tool call)
    failure: str | None = None  # the model could not be asked, or the prompt did not fit
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # A trajectory case's (`assistant/eval/trajectory.py`): its model calls, and how its path
    # ended (finishRequest, "step cap", "length", or the run's reason); None for one step.
    steps: int | None = None
    ended: str | None = None


class Asker:
    """Asks one configuration the cases, through a model client the caller owns (opened with
    `Asker.options`); calls from many tasks at once share its connections. `budget_of`: the
    context budget of a model (its tokenizer, the configuration's instructions)."""

    def __init__(
        self, config: Config, model: ModelClient, budget_of: Callable[[str], PromptBudget]
    ) -> None:
        self.config = config
        self._model = model
        self._budget_of = budget_of
        self._budgets: dict[str, PromptBudget] = {}

    @staticmethod
    def options(config: Config, options: ModelOptions) -> ModelOptions:
        """The model client's options for `config`."""
        return replace(
            options,
            model=config.model,
            base_url=config.base_url if config.base_url is not None else options.base_url,
            temperature=config.temperature,
            instructions=config.instructions,
        )

    def model_of(self, case: Case) -> str | None:
        """The model a case is asked of, when not the configuration's: its channel's, as a
        run there would ask, unless a model was named."""
        return case.model if self.config.channel_models else None

    def _budget(self, model: str) -> PromptBudget:
        if model not in self._budgets:
            self._budgets[model] = self._budget_of(model)
        return self._budgets[model]

    async def ask(self, case: Case) -> Answer:
        entries = list(case.before)
        if self.config.persona is not None:
            try:
                entries = with_persona(entries, self.config.persona)
            except ValueError as exc:
                return Answer(failure=str(exc))
        model = self.model_of(case)
        budget = self._budget(model or self.config.model)
        if budget.tokens < 1:
            return Answer(
                failure=f"the prompt does not fit the context budget: the instructions and "
                f"tools take {budget.fixed} tokens and the answer {budget.answer}, which "
                "leaves the log nothing"
            )
        # The tools the recorded thread had: its servers' and searchSlack where it called them.
        box = recorded_toolbox({}, case.log, _never, search=True)
        try:
            prompt = budget.with_tools(box.extra_schemas).prompts(ContextLog(entries)).next()
        except BudgetError as exc:
            return Answer(failure=f"the prompt does not fit the context budget: {exc}")
        try:
            reply = await self._model.next_step(prompt.text, model=model, tools=box.schemas)
        except ModelError as exc:
            return Answer(failure=f"the model call failed: {exc}")
        calls: list[ToolCall | ToolCallError] = []
        for raw in reply.calls:
            try:
                calls.append(box.parse(raw.name, raw.arguments))
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
