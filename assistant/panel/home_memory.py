"""Channel memory on the App Home (docs/slack-features.md#channel-memory): to each person the
memories of the channels whose settings they may see, each with who asked and when, and
**Edit** (a modal) and **Delete** where they may change it: the channel's editors, and a
memory's author on their own. The section is bounded (Slack's home tab takes 100 blocks): the
newest few of a channel, a note saying how many more, and at most so many blocks in all."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from assistant.i18n.words import ENGLISH, N_, Words
from context.memory import Memory

MEMORY_EDIT_ACTION = "memory_edit"
MEMORY_DELETE_ACTION = "memory_delete"
MEMORY_MODAL = "memory_modal"
MEMORY_TEXT = "memory_text"
SHOWN_PER_CHANNEL = 3  # the newest of a channel; `assistant memory list` has them all
MAX_BLOCKS = 30  # of the home tab's 100, the rest are the settings', grants' and sign-ins'
MAX_TEXT = 1000  # `context.memory.clean_text`'s cap, told to the modal's input
NOT_YOURS = N_("You can change the memories of your channels you edit, and your own.")

_SMALLEST = 4  # the divider, the header, a channel and the note saying how many are not shown

# A button's value or the modal's metadata: "CHANNEL/ID"; anything else names no memory.
_TARGET = re.compile(r"^([A-Z0-9]{2,20}|\*)/([0-9]{1,12})$")


def target(value: object) -> tuple[str, int] | None:
    """The (channel, memory id) a button or modal names, or None (forged or garbled)."""
    found = _TARGET.match(value) if isinstance(value, str) else None
    return None if found is None else (found.group(1), int(found.group(2)))


def _escaped(text: str) -> str:
    # A memory is what a person said: shown as text, never as a mention, link or markup.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def memory_blocks(
    memories: Sequence[Memory],
    may_change: Callable[[Memory], bool],
    words: Words = ENGLISH,
    room: int = MAX_BLOCKS,
) -> list[dict[str, Any]]:
    """The home tab's blocks of `memories` (none: no blocks), by channel, newest first: at
    most `room` (what the rest of the tab leaves of Slack's 100) and `MAX_BLOCKS`."""
    room = min(room, MAX_BLOCKS)
    if not memories or room < _SMALLEST:
        return []
    _ = words.gettext
    by_channel: dict[str, list[Memory]] = {}
    for memory in memories:
        by_channel.setdefault(memory.channel, []).append(memory)
    blocks: list[dict[str, Any]] = [
        {"type": "divider"},
        {"type": "header", "text": {"type": "plain_text", "text": _("Channel memory")}},
    ]
    left = 0
    for channel, kept in sorted(by_channel.items()):
        newest = sorted(kept, key=lambda m: m.id, reverse=True)
        shown = newest[:SHOWN_PER_CHANNEL]
        channel_blocks = [_context(_("The workspace") if channel == "*" else f"<#{channel}>")]
        for memory in shown:
            channel_blocks.extend(_memory(memory, may_change(memory), words))
        if len(newest) > len(shown):
            more = len(newest) - len(shown)
            note = words.ngettext("{n} more memory here.", "{n} more memories here.", more)
            channel_blocks.append(_context(note))
        if len(blocks) + len(channel_blocks) > room - 1:  # the last note's place kept
            left += len(kept)
            continue
        blocks.extend(channel_blocks)
    if left:
        blocks.append(
            _context(
                words.ngettext("{n} more memory not shown.", "{n} more memories not shown.", left)
            )
        )
    return blocks


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def _memory(memory: Memory, changeable: bool, words: Words) -> list[dict[str, Any]]:
    _ = words.gettext
    who = f"<@{memory.author}>" if memory.author != "cli" else "cli"
    said = f"{_escaped(memory.text)}\n_{who}, {memory.created_at[:16]}_"
    value = f"{memory.channel}/{memory.id}"
    blocks: list[dict[str, Any]] = [
        {
            "type": "section",
            "block_id": f"memory_{memory.id}",
            "text": {"type": "mrkdwn", "text": said},
        }
    ]
    if changeable:
        blocks.append(
            {
                "type": "actions",
                "block_id": f"memory_actions_{memory.id}",
                "elements": [
                    _button(MEMORY_EDIT_ACTION, _("Edit"), value),
                    {**_button(MEMORY_DELETE_ACTION, _("Delete"), value), "style": "danger"},
                ],
            }
        )
    return blocks


def _button(action: str, label: str, value: str) -> dict[str, Any]:
    return {
        "type": "button",
        "action_id": action,
        "text": {"type": "plain_text", "text": label},
        "value": value,
    }


def memory_modal(memory: Memory, words: Words = ENGLISH) -> dict[str, Any]:
    """The modal that changes one memory's text."""
    _ = words.gettext
    return {
        "type": "modal",
        "callback_id": MEMORY_MODAL,
        "private_metadata": f"{memory.channel}/{memory.id}",
        "title": {"type": "plain_text", "text": _("Edit memory")},
        "submit": {"type": "plain_text", "text": _("Save")},
        "close": {"type": "plain_text", "text": _("Cancel")},
        "blocks": [
            {
                "type": "input",
                "block_id": MEMORY_TEXT,
                "label": {"type": "plain_text", "text": _("What to remember")},
                "element": {
                    "type": "plain_text_input",
                    "action_id": MEMORY_TEXT,
                    "multiline": True,
                    "max_length": MAX_TEXT,
                    "initial_value": memory.text,
                },
            }
        ],
    }
