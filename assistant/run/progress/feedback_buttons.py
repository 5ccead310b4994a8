"""The feedback buttons that end the last message of every answer (docs/log-format.md#feedback);
their clicks are recorded by `assistant.panel.feedback`."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import (
    ContextActionsBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
)

from assistant.i18n.words import ENGLISH, Words

ACTION_ID = "answer_feedback"
VOTES = ("good", "bad")


def feedback_blocks(index: int, words: Words = ENGLISH) -> list[dict[str, Any]]:
    """The blocks that end the last message of the answer recorded as entry `index`, their
    labels in `words`' language."""
    buttons = FeedbackButtonsElement(
        action_id=ACTION_ID,
        positive_button=FeedbackButtonObject(
            text="👍",
            accessibility_label=words.gettext("This answer was helpful"),
            value=f"good:{index}",
        ),
        negative_button=FeedbackButtonObject(
            text="👎",
            accessibility_label=words.gettext("This answer was not helpful"),
            value=f"bad:{index}",
        ),
    )
    return [ContextActionsBlock(elements=[buttons]).to_dict()]
