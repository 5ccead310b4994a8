"""While a run works in a panel thread of a workspace that refused agent sessions, Slack's
"is thinking…" status with rotating loading messages instead of the :eyes: reaction
(`assistant.run.progress.indicators` decides by the thread's kind). This is the legacy view's
`assistant.threads.setStatus`, which Slack's changelog of 2026-08-20 bridges to the sessions
until February 2027 and which there refuses free text: where sessions apply it is never called.
"""

from __future__ import annotations

from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import ENGLISH, N_, Words
from context.storage import PanelThread, Store, ThreadKey
from context.storage.async_store import async_store

STATUS = N_("is thinking…")  # what the panel shows while a run works


@dataclass(frozen=True)
class PanelStatus:
    client: AsyncWebClient
    store: Store  # not PanelStore alone: `read` needs its local_reads
    loading_messages: tuple[str, ...]  # ASSISTANT_LOADING_MESSAGES, in `words`' language
    # The deployment's language (ASSISTANT_LOCALE): the status is set as a run starts, before
    # it has asked Slack which language the person reads.
    words: Words = ENGLISH

    async def thread(self, key: ThreadKey) -> PanelThread | None:
        """The thread's panel side metadata (its title among them), None when it was not
        opened in the assistant panel: kept in the store, so a resumed run knows it too."""
        return await async_store(self.store).read(self.store.panel, key)

    async def show(self, key: ThreadKey, working: bool) -> None:
        """Set the status as a run starts; clear it (an empty status) when it ends."""
        if working:
            await self.client.assistant_threads_setStatus(
                channel_id=key.channel,
                thread_ts=key.thread_ts,
                status=self.words.gettext(STATUS),
                loading_messages=list(self.loading_messages) or None,
            )
        else:
            await self.client.assistant_threads_setStatus(
                channel_id=key.channel, thread_ts=key.thread_ts, status=""
            )
