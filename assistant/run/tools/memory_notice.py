"""What the thread shows when the model remembers for the channel: "Remembered for this
channel: …" with an **Undo** button for the person who asked and the channel's editors (the
click: `assistant/intake/memory_undo.py`). The text is plain text, never Markdown: a memory
is shown as its person wrote it (its mentions already made safe)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from assistant.i18n.words import N_, Words
from assistant.run.core.lease import ensure_lease
from assistant.slack.connection import SLACK_FAILURES, slack_reason
from context.memory import Memory

if TYPE_CHECKING:
    from assistant.run.core.run_context import RunContext

log = logging.getLogger(__name__)

UNDO = "memory_undo"  # the button's action_id; its value is the memory's id
REMEMBERED = N_("Remembered for this channel: {text}")
UNDO_LABEL = N_("Undo")
UNDONE = N_("Forgotten again, undone by <@{user}>: {text}")


def remembered_blocks(memory: Memory, words: Words) -> tuple[str, list[dict[str, Any]]]:
    text = words.gettext(REMEMBERED, text=memory.text)
    button = {
        "type": "button",
        "action_id": UNDO,
        "value": str(memory.id),
        "text": {"type": "plain_text", "text": words.gettext(UNDO_LABEL)},
    }
    return text, [
        {"type": "section", "text": {"type": "plain_text", "text": text, "emoji": False}},
        {"type": "actions", "elements": [button]},
    ]


def undone_blocks(text: str, user: str, words: Words) -> tuple[str, list[dict[str, Any]]]:
    said = words.gettext(UNDONE, user=user, text=text)
    return said, [{"type": "section", "text": {"type": "mrkdwn", "text": said, "verbatim": True}}]


async def show_remembered(ctx: RunContext, memory: Memory) -> None:
    """Post the note in the run's thread (none in a replay). The memory is kept whatever Slack
    says: a note Slack refused is one line in the process's log, and the entry after the
    call says what was remembered."""
    if ctx.client is None:
        return
    text, blocks = remembered_blocks(memory, ctx.words)
    ensure_lease()
    try:
        await ctx.client.chat_postMessage(
            channel=ctx.key.channel,
            thread_ts=ctx.key.thread_ts,
            text=text,
            blocks=blocks,
            **ctx.post_as,
        )
    except SLACK_FAILURES as exc:
        log.warning("the note of memory %s was not posted: %s", memory.name, slack_reason(exc))
