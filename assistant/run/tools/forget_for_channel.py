"""forgetForChannel: drop one of the channel's memories, as the person being answered asked
(docs/log-format.md#channel-memory): only a memory of this channel (a workspace's is the CLI's
and the App Home's), by whoever may write the channel's memory."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from assistant.run.channels.memory_writers import may_write_memory
from assistant.run.core.lease import ensure_lease
from context.storage.async_store import async_store
from context.storage.memory import MemoryRefused
from context.toolcalls import ForgetForChannel

if TYPE_CHECKING:
    from assistant.run.core.run_context import RunContext

FORGOTTEN = "Forgotten for this channel: {name}, as <@{user}> asked (it said {text})."
NOT_ALLOWED = (
    "Error: not forgotten: this channel's settings (memory: {writers}) do not let "
    "{who} change its memory."
)
REFUSED = "Error: not forgotten: {why}."


async def forget_for_channel(call: ForgetForChannel, ctx: RunContext, index: int) -> str | None:
    user = ctx.asker
    if user is None or not await may_write_memory(
        ctx.memory, user, ctx.key.team, ctx.client, ctx.store
    ):
        who = f"<@{user}>" if user else "the person answered"
        return NOT_ALLOWED.format(writers=ctx.memory, who=who)
    why = ctx.posts.refusal(call.memory, 1)
    if why is not None:
        return REFUSED.format(why=why)
    ensure_lease()  # a run past its lease's deadline changes nothing
    key = ctx.key
    try:
        gone = await async_store(ctx.store).write(
            ctx.store.forget, key.team, key.channel, int(call.memory[1:]), user, str(key)
        )
    except MemoryRefused as exc:
        return REFUSED.format(why=exc)
    ctx.posts.charge(call.memory, 1)
    said = json.dumps(gone.text, ensure_ascii=False)
    return FORGOTTEN.format(name=gone.name, user=user, text=said)
