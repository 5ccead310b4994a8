"""Channel names for the console trace's thread headers (`#general`, `DM with <@U…>`).

Slack's events name a channel by id only. A name is asked of Slack (`conversations.info`)
once per channel, in the background, the first time the trace wants it: the trace never
waits for Slack, and a header printed before the answer shows the thread's id alone. A
channel Slack will not describe (a missing scope, an error) is shown by id until the answer
expires.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from cachetools import TTLCache
from slack_sdk.web.async_client import AsyncWebClient

from assistant.slack.connection import SLACK_FAILURES
from assistant.slack.workspaces import TokenUnavailable
from context.storage import ThreadKey

log = logging.getLogger(__name__)

# A workspace's client by its team id; None where the app is not installed.
Clients = Callable[[str], Awaitable[AsyncWebClient | None]]
NAME_SECONDS = 3600.0  # channels are seldom renamed; a stale name for an hour is harmless
CACHE_SIZE = 10_000


class ChannelNames:
    """`names(key)`: the name of the thread's channel when known, else None (and a lookup
    starts, if the caller runs in an event loop)."""

    def __init__(self, clients: Clients, seconds: float = NAME_SECONDS) -> None:
        self._clients = clients  # each workspace's (assistant/slack/workspaces.py)
        self._names: TTLCache[str, str | None] = TTLCache(CACHE_SIZE, seconds)
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def __call__(self, key: ThreadKey) -> str | None:
        channel = key.channel
        if channel in self._names:
            return self._names[channel]
        if channel not in self._tasks:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return None
            task = loop.create_task(self._ask(key.team, channel))
            self._tasks[channel] = task
            task.add_done_callback(lambda _: self._tasks.pop(channel, None))
        return None

    async def _ask(self, team: str, channel: str) -> None:
        try:
            client = await self._clients(team)
            name = None  # not installed there: nothing is asked
            if client is not None:
                answer = await client.conversations_info(channel=channel)
                name = describe_channel(answer.get("channel") or {})
        except (*SLACK_FAILURES, TokenUnavailable) as exc:
            log.info("no name for channel %s: %s", channel, type(exc).__name__)
            name = None
        self._names[channel] = name

    async def settle(self) -> None:
        """Until the lookups under way have their answers."""
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def close(self) -> None:
        """Stop the lookups still under way."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


def describe_channel(channel: dict[str, Any]) -> str | None:
    """How people name a conversation: `#name`, `DM with <@U…>`, `group DM mpdm-…`."""
    if channel.get("is_im"):
        user = channel.get("user")
        return f"DM with <@{user}>" if user else "DM"
    name = channel.get("name")
    if not name:
        return None
    return f"group DM {name}" if channel.get("is_mpim") else f"#{name}"
