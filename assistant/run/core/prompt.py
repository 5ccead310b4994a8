"""Each step's prompt within the context budget (docs/log-format.md#fitting-the-context-budget): the
log's share of the model's window, and the prompts of one run built through one cache."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from assistant.model.instructions import SYSTEM_MESSAGE
from assistant.model.json_mode import JSON_MODE_NOTE, tools_note
from assistant.model.limits import ServerWindow
from assistant.model.tool_calls import TOOL_SCHEMAS, Tools
from context.budget import BudgetError, BuiltPrompt, PromptBuilder, carries_instructions
from context.log import ContextLog
from context.tokens import TokenCounter, counter_for
from context.toolcalls import ExpandEntry

# The two messages' framing (role markers, separators): a few tokens per message, rounded up.
MESSAGE_FRAMING_TOKENS = 16
# Below this the log could not hold a question and its answer's tool calls.
MIN_LOG_TOKENS = 1_000
HEAD_CHARS = 2_000  # what the prompt keeps of a long text before the expandEntry marker
# What the MCP servers' tool schemas may take of the log's budget (assistant/mcp/room.py): the
# rest is the thread's, so many tools or a huge schema never leave the log no room.
SERVER_TOOLS_SHARE = 0.25
# A server's tokenizer is not a fixed multiple of our estimate: a prompt cut to the window it
# named, by the ratio of its count to ours, keeps this much more room.
SCALE_MARGIN = 1.05


def fixed_tokens(counter: TokenCounter, instructions: str | None = None) -> int:
    """What every call spends before the log: the system message (`instructions`, where
    `assistant eval --instructions-file` replaces it) and the schemas of the tools every run
    has (a run offered more takes them off its log's share: `with_tools`), or in the
    constrained mode what the system message says of them instead, whichever is more."""
    system = SYSTEM_MESSAGE if instructions is None else instructions
    return (
        counter.count(system)
        + tools_tokens(counter, TOOL_SCHEMAS, JSON_MODE_NOTE)
        + (MESSAGE_FRAMING_TOKENS)
    )


def tools_tokens(counter: TokenCounter, schemas: Tools, note: str = "") -> int:
    """What `schemas` cost a call: their JSON in the tools mode, or `note` and their lines of
    the system message in the constrained mode (assistant/model/json_mode.py), the larger."""
    shown = json.dumps(schemas, ensure_ascii=False, separators=(",", ":"))
    described = f"\n\n{note}\n{tools_note(schemas)}"
    return max(counter.count(shown), counter.count(described))


class WindowTooSmall(BudgetError):
    """The model's context window cannot hold the instructions, the tools and the answer's
    cap with any log: no thread can be answered until the window or the cap changes."""


@dataclass(frozen=True)
class PromptBudget:
    """How many tokens of `counter` the log text may take in one call."""

    tokens: int
    counter: TokenCounter
    answer: int = 0  # what the window keeps for the answer (ASSISTANT_ANSWER_TOKENS)
    fixed: int = 0  # and for what every call sends besides the log (`fixed_tokens`)

    @classmethod
    def for_window(
        cls, model: str, context_tokens: int, answer_tokens: int, instructions: str | None = None
    ) -> PromptBudget:
        """The model's window minus the answer's reserve and the fixed part; settings
        validation (`assistant.settings`) makes sure at least MIN_LOG_TOKENS remain (for
        the fixed instructions: other `instructions` may leave the log less, or nothing)."""
        counter = counter_for(model)
        fixed = fixed_tokens(counter, instructions)
        return cls(context_tokens - answer_tokens - fixed, counter, answer_tokens, fixed)

    def within(self, window: ServerWindow | None) -> PromptBudget:
        """This budget, made no larger than what the window a server named (else the
        configured one) leaves the log, in the server's tokens: `window.scale` of ours each;
        with the answer's cap learned from the server (`window.answer`) kept for the answer.
        Raises WindowTooSmall when the window leaves the log nothing."""
        if window is None:
            return self
        named = window.tokens
        answer = self.answer if window.answer is None else window.answer
        configured = self.tokens + self.answer - answer  # the configured window's share
        whole = named if named is not None else configured + answer + self.fixed
        tokens = int(whole / window.scale) - answer - self.fixed
        if tokens < 1:
            what = "model server's" if named is not None else "configured"
            raise WindowTooSmall(
                f"the {what} context window of {whole} tokens leaves no room "
                f"for the log after the {answer + self.fixed} kept for the instructions "
                f"and the answer (ASSISTANT_ANSWER_TOKENS), the server counting {window.scale:.2f} "
                "tokens for each of the estimate's"
            )
        return PromptBudget(min(tokens, configured), self.counter, answer, self.fixed)

    def server_window(
        self, window: int, server_tokens: int | None, prompt: BuiltPrompt
    ) -> ServerWindow:
        """The window a server named on refusing `prompt`, with how many of our tokens one of
        its tokens is worth: from the tokens it counted in the prompt, when it said."""
        ours = prompt.tokens + self.fixed
        scale = 1.0
        if server_tokens is not None and ours > 0:
            scale = max(1.0, server_tokens / ours) * SCALE_MARGIN
        return ServerWindow(window, scale)

    def with_tools(self, schemas: list[dict[str, Any]]) -> PromptBudget:
        """This budget less what the schemas beyond every run's (searchSlack's, an MCP
        server's) add to every call; BudgetError when they leave the log nothing."""
        if not schemas:
            return self
        extra = tools_tokens(self.counter, schemas)
        if self.tokens - extra < 1:
            raise BudgetError(
                f"the tools offered ({extra} tokens of schemas) leave no room for the log"
            )
        return replace(self, tokens=self.tokens - extra, fixed=self.fixed + extra)

    def server_tools_tokens(self) -> int:
        """What the MCP servers' tool schemas may take of every request: a share of the log's
        budget."""
        return int(self.tokens * SERVER_TOOLS_SHARE)

    def prompts(self, log: ContextLog) -> RunPrompts:
        """The prompts of one run on `log` (which the run keeps up to date)."""
        return RunPrompts(self, log)


class RunPrompts:
    """The prompts of one run, built step after step by one `PromptBuilder` (the old entries
    are counted once, the cut stays put while it can); what expandEntry brought back in this
    run is shown whole (unless nothing else fits)."""

    def __init__(self, budget: PromptBudget, log: ContextLog) -> None:
        self.log = log
        self.first_new = len(log)  # entries from here on are recorded during the run
        self.builder = PromptBuilder(
            budget.tokens, budget.counter, pinned=carries_instructions, head_chars=HEAD_CHARS
        )

    def narrow(self, budget: PromptBudget) -> None:
        """From now on, the prompts fit `budget` when it is smaller than theirs (a server
        named a smaller window, or counts more tokens than the estimate). A larger one waits
        for the next run: the cut stays put."""
        if budget.tokens >= self.builder.budget:
            return
        self.builder = PromptBuilder(
            budget.tokens, budget.counter, pinned=carries_instructions, head_chars=HEAD_CHARS
        )

    def next(self) -> BuiltPrompt:
        entries = self.log.entries
        expanded = [
            i
            for i in range(max(self.first_new, 1), len(entries))
            if entries[i].role == "system" and isinstance(entries[i - 1].content, ExpandEntry)
        ]
        return self.builder.build(entries, exempt=expanded)


@dataclass
class ShownPrompt:
    """Which entries the run's last prompt showed whole: not left out, not cut. A tool that
    would repeat what the model has just read (getThreadHistory) names those entries instead."""

    through: int = -1  # the last index the prompt held; -1 before the first prompt
    omitted: tuple[tuple[int, int], ...] = ()
    shortened: frozenset[int] = field(default_factory=frozenset)

    def show(self, prompt: BuiltPrompt, through: int) -> None:
        self.through, self.omitted = through, prompt.omitted
        self.shortened = frozenset(prompt.shortened)

    def in_full(self, index: int) -> bool:
        return (
            0 <= index <= self.through
            and index not in self.shortened
            and not any(first <= index <= last for first, last in self.omitted)
        )
