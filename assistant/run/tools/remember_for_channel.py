"""rememberForChannel: keep what the person being answered asked the channel to remember
(docs/log-format.md#channel-memory), and show it in the thread with Undo (`memory_notice.py`).
Checked as a post is: the person may write the channel's memory (its `memory` setting, asked
again now), the text within a message's caps (mentions made safe), and the write counts
against the answer's posts (ASSISTANT_MAX_POSTS_PER_REPLY…)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from assistant.run.channels.memory_writers import may_write_memory
from assistant.run.core.lease import ensure_lease
from assistant.run.tools.memory_notice import show_remembered
from assistant.slack.text import neutralize_mentions
from context.memory import scope_of
from context.storage.async_store import async_store
from context.storage.memory import MemoryRefused
from context.toolcalls import RememberForChannel

if TYPE_CHECKING:
    from assistant.run.core.run_context import RunContext

REMEMBERED = "Remembered for this {where} as {name}, as <@{user}> asked: {text}"
NOT_ALLOWED = (
    "Error: not remembered: this channel's settings (memory: {writers}) do not let "
    "{who} write its memory."
)
REFUSED = "Error: not remembered: {why}."
_WHERE = {"channel": "channel", "dm": "person", "workspace": "workspace"}


async def remember_for_channel(call: RememberForChannel, ctx: RunContext, index: int) -> str | None:
    user = ctx.asker
    if user is None or not await may_write_memory(
        ctx.memory, user, ctx.key.team, ctx.client, ctx.store
    ):
        who = f"<@{user}>" if user else "the person answered"
        return NOT_ALLOWED.format(writers=ctx.memory, who=who)
    text = neutralize_mentions(call.text, ctx.posts.caps.people_per_message)
    why = ctx.posts.refusal(text, 1)
    if why is not None:
        return REFUSED.format(why=why)
    ensure_lease()  # a run past its lease's deadline changes nothing
    key = ctx.key
    try:
        memory = await async_store(ctx.store).write(
            ctx.store.remember, key.team, key.channel, text, user, str(key), str(key)
        )
    except MemoryRefused as exc:
        return REFUSED.format(why=exc)
    ctx.posts.charge(text, 1)
    await show_remembered(ctx, memory)
    said = json.dumps(memory.text, ensure_ascii=False)
    where = _WHERE[scope_of(key.channel)]
    return REMEMBERED.format(where=where, name=memory.name, user=user, text=said)
