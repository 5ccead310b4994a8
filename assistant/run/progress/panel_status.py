"""While a run works in a panel thread, Slack's "is thinking…" status with rotating loading
messages instead of the :eyes: reaction (`assistant.run.progress.indicators` decides by the
thread's kind).
"""

from __future__ import annotations

from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from context.storage import Store, ThreadKey
from context.storage.async_store import async_store

STATUS = "is thinking…"  # what the panel shows while a run works


@dataclass(frozen=True)
class PanelStatus:
    client: AsyncWebClient
    store: Store  # not PanelStore alone: `read` needs its local_reads
    loading_messages: tuple[str, ...]  # ASSISTANT_LOADING_MESSAGES

    async def applies(self, key: ThreadKey) -> bool:
        """Whether the thread was opened in the assistant panel (its side metadata says so,
        so a run resumed after a restart knows it too)."""
        return await async_store(self.store).read(self.store.panel, key) is not None

    async def show(self, key: ThreadKey, working: bool) -> None:
        """Set the status as a run starts; clear it (an empty status) when it ends."""
        if working:
            await self.client.assistant_threads_setStatus(
                channel_id=key.channel,
                thread_ts=key.thread_ts,
                status=STATUS,
                loading_messages=list(self.loading_messages) or None,
            )
        else:
            await self.client.assistant_threads_setStatus(
                channel_id=key.channel, thread_ts=key.thread_ts, status=""
            )
