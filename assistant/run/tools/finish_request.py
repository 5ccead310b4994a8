"""finishRequest: ends the run; nothing to carry out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from context.toolcalls import FinishRequest

if TYPE_CHECKING:
    from assistant.run.core.run_context import RunContext


async def finish_request(call: FinishRequest, ctx: RunContext, index: int) -> str | None:
    return None
