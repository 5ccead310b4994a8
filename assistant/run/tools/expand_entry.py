"""expandEntry: one entry's full text, for an entry the prompt showed cut short."""

from __future__ import annotations

from typing import TYPE_CHECKING

from context.prompt_pieces import full_text
from context.toolcalls import ExpandEntry

if TYPE_CHECKING:
    from assistant.run.core.run_context import RunContext


async def expand_entry(call: ExpandEntry, ctx: RunContext, index: int) -> str:
    entries = ctx.log.entries  # as the model was last shown them
    if call.index >= len(entries):
        last = len(entries) - 1
        return f"Error: there is no entry {call.index} to expand; the entries are 0 to {last}."
    return f"Entry {call.index} in full:\n{full_text(entries[call.index])}"
