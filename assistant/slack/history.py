"""The thread's Slack messages, for getThreadHistory
(docs/log-format.md#tool-calls-and-their-results).

Slack limits `conversations.replies` hard, so the store keeps a copy of the thread's
messages: every message the bot records or posts goes in as it happens, and Slack is asked
once per thread, for what came before the bot was there.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from assistant.slack.text import clean_user_text
from context.entry import format_timestamp
from context.storage import Store, ThreadKey, ThreadMessage
from context.storage.async_store import async_store

PAGE_SIZE = 200


def slack_time(ts: str) -> str:
    """A Slack `ts` ("1712233980.000100") in the log's timestamp form."""
    return format_timestamp(datetime.fromtimestamp(float(ts), UTC))


def thread_message(message: dict[str, Any]) -> ThreadMessage:
    author = message.get("user") or message.get("bot_id") or "unknown"
    return ThreadMessage(
        ts=message["ts"], user=f"<@{author}>", text=clean_user_text(message.get("text", ""), None)
    )


class ThreadHistory:
    def __init__(self, store: Store, client: AsyncWebClient) -> None:
        self._store = store
        self._client = client

    async def messages(self, key: ThreadKey) -> list[ThreadMessage]:
        """Every message of the thread, oldest first."""
        messages, complete = await async_store(self._store).read(self._store.thread_messages, key)
        if complete:
            return messages
        # Copies already held stay as recorded (the bot's leading mention removed, as in the
        # log): Slack fills in only what the store lacks.
        held = {m.ts for m in messages}
        fetched = [m for m in await self._fetch(key) if m.ts not in held]
        await async_store(self._store).write(self._store.remember_messages, key, fetched, True)
        messages, _ = await async_store(self._store).read(self._store.thread_messages, key)
        return messages

    async def _fetch(self, key: ThreadKey) -> list[ThreadMessage]:
        # Slack may repeat the parent message on every page: keep one per ts.
        by_ts: dict[str, ThreadMessage] = {}
        response = await self._client.conversations_replies(
            channel=key.channel, ts=key.thread_ts, limit=PAGE_SIZE
        )
        async for page in response:
            for message in page.get("messages", []):
                by_ts[message["ts"]] = thread_message(message)
        return list(by_ts.values())
