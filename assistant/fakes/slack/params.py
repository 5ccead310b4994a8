"""Reading Web API requests for `FakeSlack`'s method families: the bearer token, required
arguments, JSON-or-string fields and boolean flags, as Slack reads them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from assistant.fakes.slack.store import SlackError

# A Web API method: the request's params in, the answer's body out (or SlackError).
Handler = Callable[[dict[str, Any]], dict[str, Any]]


def bearer(header: str | None) -> str | None:
    if header and header.startswith("Bearer "):
        return header.removeprefix("Bearer ").strip() or None
    return None


def required(params: dict[str, Any], name: str, error: str) -> str:
    value = params.get(name)
    if not value:
        raise SlackError(error)
    return str(value)


def json_field(value: Any) -> Any:
    # Form-encoded requests carry blocks/metadata as JSON strings; JSON bodies as objects.
    if isinstance(value, str) and value.strip().startswith(("[", "{")):
        return json.loads(value)
    return value


def flag(value: Any) -> bool:
    return str(value or "").lower() in ("1", "true")
