"""What one call sends: the two messages (the fixed instructions, then the log and its images)
and the cap on the answer (docs/log-format.md#messages-of-a-call)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from assistant.model.instructions import SYSTEM_MESSAGE

ImagePart = dict[str, Any]  # {"type": "image_url", "image_url": {"url": "data:…"}}


def build_messages(
    prompt_text: str, images: Sequence[ImagePart] = (), instructions: str = SYSTEM_MESSAGE
) -> list[dict[str, object]]:
    """The two messages of every call: the fixed instructions (another text only in
    `assistant eval --instructions-file`), then the log (followed by the recent images as
    parts, when there are any: the text part stays the cached prefix)."""
    content: object = prompt_text
    if images:
        content = [{"type": "text", "text": prompt_text}, *images]
    return [
        {"role": "system", "content": instructions},
        {"role": "user", "content": content},
    ]


def answer_limit(model: str, tokens: int) -> dict[str, int]:
    """The request argument that caps an answer at `tokens`: OpenAI's reasoning models (o1,
    o3, o4, gpt-5) refuse `max_tokens` and want `max_completion_tokens` (which covers their
    reasoning too), and some other OpenAI-compatible servers accept only `max_tokens`."""
    name = model.strip().lower().removeprefix("ft:").rsplit("/", 1)[-1]
    if _REASONING_MODEL.match(name):
        return {"max_completion_tokens": tokens}
    return {"max_tokens": tokens}


_REASONING_MODEL = re.compile(r"o\d|gpt-5")
