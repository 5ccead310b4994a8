"""What an eval run will cost, estimated before it starts: each case's prompt as the prompt
of its log (the fixed part, the configuration's instructions counted, then the log's text up
to the context budget) and its answer as long as the recorded step, priced with
`ASSISTANT_PRICES` (the table of `assistant usage`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from assistant.eval.ask import Config
from assistant.eval.cases import Case
from assistant.run.core.prompt import PromptBudget
from assistant.settings.prices import PriceTable


@dataclass
class Estimate:
    cases: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0  # None: a model with no price
    unpriced: list[str] = field(default_factory=list)

    def line(self) -> str:
        money = f"${self.cost:,.2f}" if self.cost is not None else "unknown cost"
        if self.unpriced:
            money += f" (no price for {', '.join(self.unpriced)} in ASSISTANT_PRICES)"
        return (
            f"{self.cases} cases, {self.calls} model calls, about "
            f"{self.prompt_tokens:,} prompt and {self.completion_tokens:,} answer tokens, {money}"
        )


def estimate(
    cases: Iterable[Case],
    configs: Sequence[tuple[Config, Callable[[str], PromptBudget]]],
    trials: int,
    prices: PriceTable | None,
    beat_trials: int | None = None,
) -> Estimate:
    """The run's calls and tokens: each case `trials` times (`beat_trials` for a case people
    gave a 👎, when given) under each configuration, asked of the model it would be (a
    channel's own, `Asker.model_of`), whose budget (its window, its instructions) bounds the
    prompt."""
    found = Estimate()
    budgets: dict[tuple[int, str], PromptBudget] = {}
    counter = None
    # A log's cases come one after another: its entries are counted once, then let go.
    log: object = None
    counted: list[int] = []  # the tokens of the log's entries 0, 1, …
    tokens: dict[str, list[int]] = {}  # per model: prompt and answer tokens of every trial
    for case in cases:
        found.cases += 1
        times = beat_trials if case.feedback == "beat" and beat_trials else trials
        found.calls += times * len(configs)
        if case.log is not log:
            log, counted = case.log, []
        for number, (config, budget_of) in enumerate(configs):
            model = (case.model if config.channel_models else None) or config.model
            if (number, model) not in budgets:
                budgets[number, model] = budget_of(model)
            budget = budgets[number, model]
            counter = counter or budget.counter  # one count of the logs is close enough
            while len(counted) < case.at:
                counted.append(counter.count(case.log[len(counted)].canonical_json()))
            figures = tokens.setdefault(model, [0, 0])
            prompt = budget.fixed + min(sum(counted[: case.at]), max(budget.tokens, 0))
            figures[0] += prompt * times
            answer = sum(counter.count(entry.canonical_json()) for entry in case.reference)
            figures[1] += answer * times
    found.prompt_tokens = sum(prompt for prompt, _ in tokens.values())
    found.completion_tokens = sum(answer for _, answer in tokens.values())
    for model, (prompt, answer) in tokens.items():
        price = prices.price_of(model) if prices is not None else None
        if price is None:
            found.unpriced.append(model)
            found.cost = None
        elif found.cost is not None:
            found.cost += price.cost(prompt, 0, answer)
    return found
