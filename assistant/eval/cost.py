"""What an eval run will cost, estimated before it starts: each case's prompt as the prompt
of its log (the fixed part, then the log's text up to the context budget) and its answer as
long as the recorded step, priced with `ASSISTANT_PRICES` (the table of `assistant usage`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from assistant.eval.cases import Case
from assistant.price_settings import PriceTable
from assistant.run.loop.prompt import PromptBudget, fixed_tokens


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
    budget: PromptBudget,
    models: list[str],
    trials: int,
    prices: PriceTable | None,
) -> Estimate:
    """The run's calls and tokens (each case `trials` times for each of `models`)."""
    found = Estimate()
    counter = budget.counter
    fixed = fixed_tokens(counter)
    # A log's cases come one after another: its entries are counted once, then let go.
    log: object = None
    counted: list[int] = []  # the tokens of the log's entries 0, 1, …
    prompt = answer = 0
    for case in cases:
        found.cases += 1
        if case.log is not log:
            log, counted = case.log, []
        while len(counted) < case.at:
            counted.append(counter.count(case.log[len(counted)].canonical_json()))
        prompt += fixed + min(sum(counted[: case.at]), budget.tokens)
        answer += sum(counter.count(entry.canonical_json()) for entry in case.reference)
    runs = trials * len(models)
    found.calls = found.cases * runs
    found.prompt_tokens, found.completion_tokens = prompt * runs, answer * runs
    for model in models:
        price = prices.price_of(model) if prices is not None else None
        if price is None:
            found.unpriced.append(model)
            found.cost = None
        elif found.cost is not None:
            found.cost += price.cost(prompt * trials, 0, answer * trials)
    return found
