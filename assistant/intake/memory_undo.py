"""A click on a memory note's **Undo** (docs/slack-features.md#channel-memory): the memory is
forgotten when the clicker is the person who asked for it or one of the channel's editors
(the workspace's admins and owners, asked of Slack, and the default's editors); the removal is
an entry of the thread and a row of the audit, and the note says who undid it. Anyone else is
told privately, and nothing changes."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import N_
from assistant.intake.thread_clicks import thread_click
from assistant.run.channels.languages import Languages
from assistant.run.channels.memory_writers import may_write_memory
from assistant.run.core.recorder import Recorder
from assistant.run.tools.memory_notice import undone_blocks
from assistant.slack.connection import SLACK_FAILURES, slack_reason
from context.storage import EntryMeta, ThreadKey
from context.storage.async_store import async_store
from context.storage.memory import MemoryRefused

log = logging.getLogger(__name__)

NOT_YOURS = N_("Only the person who asked and this channel's editors may undo it.")
UNDONE_ENTRY = "<@{user}> undid memory {name} for this channel (it said {text})."


@dataclass(frozen=True)
class MemoryUndo:
    recorder: Recorder  # the events' (its writes go first: Slack waits for the ack)
    languages: Languages

    async def clicked(
        self, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """A `block_actions` payload of a memory note's Undo button."""
        click = thread_click(body, action)
        if click is None:
            log.warning("an Undo click that names no memory of its thread was ignored")
            return
        team, channel, person = click.team, click.channel, click.person
        thread_ts, message_ts = click.thread_ts, click.message_ts
        store = self.recorder.store
        memory = await async_store(store).read(store.memory, team, click.number)
        if memory is None or memory.channel != channel:
            return  # undone already (a second click, another process): nothing to do
        words = (await self.languages.of(client, team, person)).words
        if person != memory.author and not await may_write_memory(
            "editors", person, team, client, store
        ):
            await _tell(client, channel, person, thread_ts, words.gettext(NOT_YOURS))
            return
        key = ThreadKey(team, channel, thread_ts)
        try:
            gone = await self.recorder.call(
                store.forget, team, channel, memory.id, person, str(key)
            )
        except MemoryRefused:
            return  # another click got there first
        said = json.dumps(gone.text, ensure_ascii=False)
        text = UNDONE_ENTRY.format(user=person, name=gone.name, text=said)
        await self.recorder.record(key, text, meta=EntryMeta(event_id=f"memory-undo-{gone.id}"))
        shown, blocks = undone_blocks(gone.text, person, words)
        try:
            await client.chat_update(channel=channel, ts=message_ts, text=shown, blocks=blocks)
        except SLACK_FAILURES as exc:
            log.warning("the note of memory %s was not updated: %s", gone.name, slack_reason(exc))


async def _tell(client: AsyncWebClient, channel: str, user: str, thread_ts: str, text: str) -> None:
    try:
        await client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts, text=text)
    except SLACK_FAILURES as exc:
        log.warning("%s was not told they may not undo a memory: %s", user, slack_reason(exc))
