"""What the model client is built from: the OPENAI_* and ASSISTANT_*MODEL settings, as plain
values (no openai import here: the settings and the CLI read this without loading the client)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# How tool calls are asked for (ASSISTANT_TOOL_MODE): `tools` with tool_choice "required";
# `json`, the constrained mode (assistant/model/json_mode.py); `auto`, tools until the server
# is found to ignore tool_choice, then json for that model.
ToolMode = Literal["auto", "tools", "json"]


@dataclass(frozen=True)
class ModelOptions:
    """What the client is built from (the OPENAI_* and ASSISTANT_*MODEL settings)."""

    api_key: str = field(repr=False)
    base_url: str | None
    timeout: float
    max_retries: int
    model: str
    transcription_model: str
    answer_tokens: int
    temperature: float | None = None  # None: the service's default (`assistant eval` sets it)
    instructions: str | None = None  # None: SYSTEM_MESSAGE (`assistant eval` may replace it)
    tool_mode: ToolMode = "auto"
    # Whether ASSISTANT_ANSWER_TOKENS was set: if not, a cap is learned from what the server
    # tells of its window (assistant/model/server_window.py), `answer_tokens` at most.
    answer_tokens_set: bool = True


@dataclass(frozen=True)
class Wanted:
    """What the app's settings ask of the server (from ASSISTANT_*: the model room does not
    read the settings)."""

    context_tokens: int
    answer_tokens: int
    stream: bool
    images: bool
    tool_mode: str
    fixed_tokens: int = 0  # the instructions' and the tools' (`PromptBudget.fixed`)
    answer_tokens_set: bool = True
