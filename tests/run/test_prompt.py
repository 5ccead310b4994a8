"""Each step's prompt within the budget (assistant/run/core/prompt.py): the log's share of the
window, a smaller window a server named, and a run's prompts, where what expandEntry brought
back in the run is shown whole while an old long text is cut."""

from __future__ import annotations

import pytest

from assistant.model.limits import ServerWindow
from assistant.run.core.prompt import (
    HEAD_CHARS,
    SCALE_MARGIN,
    PromptBudget,
    ShownPrompt,
    fixed_tokens,
)
from context.budget import BudgetError, BuiltPrompt
from context.entry import UserContent
from context.log import ContextLog
from context.tokens import counter_for
from context.toolcalls import ExpandEntry, GetThreadHistory

MODEL = "gpt-4o-mini"
TS = "2025-04-04T12:33:00Z"


def test_the_log_gets_the_window_less_the_answer_and_what_every_call_sends() -> None:
    budget = PromptBudget.for_window(MODEL, 128_000, 4_000)
    fixed = fixed_tokens(counter_for(MODEL))
    assert fixed > 0  # the system message and the tool schemas are not free
    assert (budget.tokens, budget.answer, budget.fixed) == (128_000 - 4_000 - fixed, 4_000, fixed)


def test_a_servers_window_narrows_the_budget_in_its_own_tokens() -> None:
    budget = PromptBudget.for_window(MODEL, 128_000, 4_000)
    # A server counting twice our tokens, naming 32,000: 16,000 of ours, less the reserves.
    narrowed = budget.within(ServerWindow(32_000, 2.0))
    assert narrowed.tokens == 16_000 - 4_000 - budget.fixed
    assert (narrowed.answer, narrowed.fixed, narrowed.counter) == (
        4_000,
        budget.fixed,
        budget.counter,
    )
    # A window larger than ours never widens it; none named changes nothing.
    assert budget.within(ServerWindow(1_000_000)).tokens == budget.tokens
    assert budget.within(None) is budget


def test_a_window_that_leaves_the_log_nothing_says_what_it_keeps() -> None:
    budget = PromptBudget.for_window(MODEL, 128_000, 4_000)
    with pytest.raises(BudgetError) as refused:
        budget.within(ServerWindow(4_000))
    assert "kept for the instructions and the answer" in str(refused.value)
    assert f"{4_000 + budget.fixed}" in str(refused.value)


def test_the_servers_count_of_a_refused_prompt_scales_ours_never_below_one() -> None:
    budget = PromptBudget.for_window(MODEL, 128_000, 4_000)
    prompt = BuiltPrompt("…", tokens=10_000 - budget.fixed)  # 10,000 of ours in all
    assert budget.server_window(8_000, 15_000, prompt) == ServerWindow(8_000, 1.5 * SCALE_MARGIN)
    # A server counting fewer tokens than we do: our estimate stands (with its margin).
    assert budget.server_window(8_000, 5_000, prompt).scale == SCALE_MARGIN
    assert budget.server_window(8_000, None, prompt) == ServerWindow(8_000, 1.0)


def test_what_expand_entry_brought_back_in_the_run_is_shown_whole() -> None:
    long_text = "word " * 4_000  # 4,000 tokens: one fits the log's 6,553, two do not
    log = ContextLog()
    log.append("You are Aya.", TS)
    log.append(UserContent(userid="<@U1>", text=long_text), TS)
    log.append(UserContent(userid="<@U1>", text="and what did I say first?"), TS)
    budget = PromptBudget.for_window(MODEL, 8_000, 1_000)
    assert budget.tokens == 6_553
    prompts = budget.prompts(log)
    assert prompts.next().shortened == ()  # it fits whole, as yet

    log.append(ExpandEntry(index=1), TS)
    log.append(long_text, TS)  # the expansion's result, recorded during the run
    log.append(GetThreadHistory(), TS)
    prompt = prompts.next()
    # The old text is cut to its head; the one the model asked for in this run is whole.
    assert prompt.shortened == (1,)
    assert prompt.text.count(long_text.strip()) == 1
    assert len(long_text) > HEAD_CHARS


def test_an_entry_is_shown_in_full_only_when_the_last_prompt_held_it_uncut() -> None:
    shown = ShownPrompt()
    assert not shown.in_full(0)  # before the first prompt: nothing
    shown.show(BuiltPrompt("…", 100, omitted=((2, 4),), shortened=(6,)), through=8)
    assert [i for i in range(10) if shown.in_full(i)] == [0, 1, 5, 7, 8]
