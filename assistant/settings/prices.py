"""ASSISTANT_PRICES: what the models' tokens cost, for `assistant usage`'s estimate.

A JSON object (or the path of a file holding one) from model name to its prices in US dollars
per million tokens, as providers publish them:

    {"gpt-4o-mini": {"input": 0.15, "cached_input": 0.075, "output": 0.6}}

`cached_input` may be left out: cached tokens are then priced as input. A model the server
names with a snapshot date (`gpt-4o-mini-2024-07-18`) takes its own price if listed, else its
family's (`gpt-4o-mini`): never another family's by a shorter prefix (`gpt-4o` is not
`gpt-4o-mini`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError

PER = 1_000_000  # prices are per million tokens
_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}$")
_SHAPE = 'a JSON object {"MODEL": {"input": …, "cached_input": …, "output": …}} in US dollars '
_SHAPE += "per million tokens, or the path of a file holding one"

Price = Annotated[float, Field(ge=0, allow_inf_nan=False, strict=True)]


class ModelPrice(BaseModel):
    """One model's prices, US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: Price
    cached_input: Price | None = None
    output: Price

    def cost(self, input_tokens: int, cached_tokens: int, output_tokens: int) -> float:
        """In US dollars. `input_tokens` counts the cached ones too, as OpenAI reports them."""
        cached = self.input if self.cached_input is None else self.cached_input
        fresh = max(0, input_tokens - cached_tokens)
        return (fresh * self.input + cached_tokens * cached + output_tokens * self.output) / PER


class PriceTable(RootModel[dict[Annotated[str, Field(min_length=1)], ModelPrice]]):
    """Model name → its prices."""

    def price_of(self, model: str | None) -> ModelPrice | None:
        """The model's prices, by its name or else its snapshot's family; None if unknown."""
        if not model:
            return None
        found = self.root.get(model)
        if found is None and _SNAPSHOT.search(model):
            found = self.root.get(_SNAPSHOT.sub("", model))
        return found


def parse_prices(value: Any) -> Any:
    """ASSISTANT_PRICES: JSON text (it starts with `{`) or a file's path; the table, or
    ValueError saying what is wrong and where (one line)."""
    if not isinstance(value, str):
        return value  # given as objects (tests): pydantic checks them
    text, where = value.strip(), ""
    if not text:
        return None
    if not text.startswith("{"):
        path = Path(text)
        try:
            text, where = path.read_text(encoding="utf-8"), f" in {path}"
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ValueError(f"cannot read {text}: {reason} (expected {_SHAPE})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON{where}: {exc} (expected {_SHAPE})") from None
    try:
        return PriceTable.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        at = ".".join(str(part) for part in error["loc"]) or "the table"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise ValueError(f"{at}{where}: {error['msg']}{more}; expected {_SHAPE}") from None
