"""The assistant panel's settings: the suggested prompts and the loading messages, read from
JSON (or, for the prompts, a file of it) and checked at start with errors that say where."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from assistant.i18n.words import N_

# Slack shows at most 4 suggested prompts (assistant.threads.setSuggestedPrompts) and rotates
# through at most 10 loading messages (assistant.threads.setStatus).
MAX_PROMPTS = 4
MAX_LOADING_MESSAGES = 10

# The defaults are shown in each person's language; what the operator sets, as written.
DEFAULT_GREETING = N_("Hi, I'm {name}. How can I help?")


class SuggestedPrompt(BaseModel):
    """One button of the panel: its `title`, and the `message` it sends as the person."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    title: str = Field(min_length=1)
    message: str = Field(min_length=1)


DEFAULT_PROMPTS = (
    SuggestedPrompt(
        title=N_("Explain something"),
        message=N_("Explain how DNS works, in a few short paragraphs."),
    ),
    SuggestedPrompt(
        title=N_("Draft a message"),
        message=N_("Help me write a short, friendly note asking my team for feedback on a draft."),
    ),
    SuggestedPrompt(
        title=N_("Brainstorm ideas"),
        message=N_("Give me five ideas for a team offsite."),
    ),
)
DEFAULT_LOADING_MESSAGES = (
    N_("Reading the thread…"),
    N_("Thinking it over…"),
    N_("Writing an answer…"),
)

_PROMPTS = TypeAdapter(tuple[SuggestedPrompt, ...])
_LOADING = TypeAdapter(tuple[Annotated[str, Field(min_length=1, strict=True)], ...])
_SHAPE = 'a JSON list of {"title", "message"} objects, or the path of a file holding one'
_OBJECT = 'must be an object {"title": …, "message": …}'


def parse_prompts(value: Any) -> Any:
    """ASSISTANT_SUGGESTED_PROMPTS: JSON text (it starts with `[`) or a file's path; the
    prompts, or ValueError saying what is wrong and where."""
    if not isinstance(value, str):
        return value  # given as objects (tests, defaults): pydantic checks them
    text, where = value.strip(), ""
    if not text.startswith(("[", "{")):
        path = Path(text)
        if not path.is_file():
            raise ValueError(f"no such file {text} (expected {_SHAPE})")
        try:
            text, where = path.read_text(encoding="utf-8"), f"in {text}: "
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read {text}: {exc}") from None
    return _parse(_PROMPTS, text, where, "prompt", _SHAPE, MAX_PROMPTS)


def parse_loading_messages(value: Any) -> Any:
    """ASSISTANT_LOADING_MESSAGES: a JSON list of strings."""
    if not isinstance(value, str):
        return value
    return _parse(_LOADING, value, "", "message", "a JSON list of strings", MAX_LOADING_MESSAGES)


def _parse(
    adapter: TypeAdapter[Any], text: str, where: str, item: str, shape: str, most: int
) -> Any:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}not JSON ({exc}); expected {shape}") from None
    if not isinstance(data, list):
        found = "an object" if isinstance(data, dict) else f"a {type(data).__name__}"
        raise ValueError(f"{where}expected {shape}, found {found}")
    if len(data) > most:
        raise ValueError(f"{where}at most {most} {item}s, found {len(data)}")
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            loc = error["loc"]
            place = f"{item} {int(loc[0]) + 1}" if loc and isinstance(loc[0], int) else ""
            field = ".".join(str(part) for part in loc[1:])
            at = ", ".join(part for part in (place, field) if part)
            what = _OBJECT if error["type"] == "model_type" else error["msg"]
            problems.append(f"{at}: {what}" if at else what)
        raise ValueError(where + "; ".join(problems)) from None
