"""Slack events into the log (docs/log-format.md#what-is-recorded): who is recorded, how, and who
gets an answer."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from assistant.i18n.languages import chosen
from assistant.i18n.words import Words
from assistant.intake import references
from assistant.intake.bot_exchanges import from_bot, may_take_bot_message
from assistant.intake.channel_gate import ChannelGate
from assistant.intake.deadline import READ_SECONDS, InFlight
from assistant.intake.event_shapes import Checked
from assistant.intake.message_content import MessageContent
from assistant.intake.viewing import viewing_text
from assistant.run.core.recorder import Recorder
from assistant.run.core.requests import AnswerRequest
from assistant.run.scheduling.elsewhere import RunRequests
from assistant.settings.environment import Settings
from assistant.slack.history import slack_time
from assistant.slack.text import clean_user_text
from assistant.slack.workspaces import PerWorkspace
from context.entry import UserContent
from context.storage import EntryMeta, ThreadKey, ThreadMessage

log = logging.getLogger(__name__)


def thread_key(team: str, channel: str, message: dict[str, Any]) -> ThreadKey:
    return ThreadKey(team, channel, message.get("thread_ts") or message["ts"])


@dataclass(frozen=True)
class EventRecorder:
    settings: Settings
    recorder: Recorder  # with threads of its own: acknowledgements never queue behind runs
    scheduler: RunRequests  # this process's RunScheduler, or RunsElsewhere (the ingress)
    # Each workspace's, with its token: what a message carries (its text, files and linked
    # messages), and whether the channel takes the message (and its persona).
    content: PerWorkspace[MessageContent]
    gate: PerWorkspace[ChannelGate]
    reading: InFlight = field(default_factory=InFlight)

    async def message(
        self,
        message: Checked,
        bot_user_id: str | None,
        mention: bool,
        received_at: float | None = None,
    ) -> None:
        """A person's message: a mention, a DM, or a message in a thread the bot is in.
        `received_at`: when the event arrived (the event loop's clock), if known: its files
        and links are read until `READ_SECONDS` after it (see `assistant.intake.deadline`)."""
        loop = asyncio.get_running_loop()
        deadline = (received_at or loop.time()) + READ_SECONDS
        event = message.event
        key = thread_key(message.team, event["channel"], event)
        direct = event.get("channel_type") == "im"
        if not mention and not direct:
            # Slack sends no app_mention in a DM: there the message event is the only one.
            if bot_user_id and re.search(rf"<@{re.escape(bot_user_id)}[|>]", event.get("text", "")):
                return  # the app_mention event records it, and asks for the answer
            # A top-level message starts a thread of its own, which nothing can have recorded
            # before it (its mention, if any, is the app_mention event's): no store read for
            # the most common event there is, a channel message the bot only acknowledges.
            if key.thread_ts == event["ts"] or not await self._in_thread(key):
                return
        gate = await self.gate.of(message.team)
        if gate is None:
            log.warning("a message ignored: the app is not installed in %s", message.team)
            return
        rules = await gate.admit(
            message.team, key, event["user"], message.event_id, "thread_ts" in event
        )
        if rules is None:
            return  # the bot is off in this channel, or this person may not use it there
        words = Words(chosen(rules.locale, rules.workspace_locale, self.settings.persona.locale))
        if from_bot(event) and not await may_take_bot_message(
            self.recorder,
            gate.client,
            key,
            event["user"],
            self.settings.answers.max_bot_exchanges_per_thread,
            rules.post_as,
            words,
        ):
            return  # two bots answering each other: this thread has had enough
        raw = event.get("text", "")
        media = event.get("files") or references.links_in(raw)
        # A second delivery waits while the first is read here, then finds it recorded.
        async with self.reading.alone((key, event["ts"])) if media else nullcontext():
            if media and await self._recorded(key, event["ts"]):
                return  # a retry: its files were read and its links resolved the first time
            # Strict mentions: a follow-up that does not mention the bot is recorded, not owed.
            followups = self.settings.answers.followups and not rules.strict_mentions
            await self._record(
                message, key, bot_user_id, mention, direct, deadline, rules.persona, followups
            )

    async def _record(
        self,
        message: Checked,
        key: ThreadKey,
        bot_user_id: str | None,
        mention: bool,
        direct: bool,
        deadline: float,
        persona: Callable[[], str],
        followups: bool,
    ) -> None:
        """`persona`: the channel's now, entry 0 if the thread is new (an old thread keeps
        its own). `followups`: whether a follow-up without a mention is owed an answer."""
        event, event_id = message.event, message.event_id
        userid = f"<@{event['user']}>"
        if direct:
            await self._note_viewing(message.team, key, event, bot_user_id, deadline, persona)
        content = await self.content.of(message.team)
        if content is None:
            return  # uninstalled meanwhile
        text, attachments = await content.read(message.team, event, bot_user_id, deadline)
        # Owed an answer from the moment it is recorded: a crash after this write loses
        # nothing (assistant.run.scheduling.scheduler resumes it), and Slack is acknowledged only
        # after it.
        wants_answer = mention or direct or followups
        entry = await self.recorder.record_message(
            key,
            UserContent(userid=userid, text=text),
            slack_time(event["ts"]),
            EntryMeta(
                slack_ts=event["ts"],
                event_id=event_id,
                wants_answer=wants_answer,
                action_token=message.action_token,
                addressed=mention or direct,
            ),
            persona,
            attachments.images,
            # A shortcut's entry is the asker's; the thread's copy keeps who wrote it.
            author=f"<@{event['author']}>" if event.get("author") else None,
        )
        if entry is None:
            return  # a retry, or the other event of a channel mention
        problems = [*message.problems, *attachments.problems]
        if problems:
            await self.recorder.record(key, "\n".join(problems))
        if wants_answer:
            self.scheduler.request(
                key,
                AnswerRequest(entry.index, event["ts"], bot_user_id, addressed=mention or direct),
            )

    async def asked_about(
        self, message: Checked, bot_user_id: str | None, received_at: float | None = None
    ) -> None:
        """The "Ask Aya about this" message shortcut (`assistant.intake.event_shapes.
        shortcut_message`): the message's text recorded like a mention, by the person who
        used the shortcut, owed an answer in the message's thread (a new one on a top-level
        message). A message in the log already (a mention, or a follow-up that strict
        mentions left unowed) is not recorded twice: the ask is then an entry of its own, by
        the person who used the shortcut, with the message's text, owed an answer."""
        event = message.event
        key = thread_key(message.team, event["channel"], event)
        if not await self._recorded(key, event["ts"]):
            await self.message(message, bot_user_id, mention=True, received_at=received_at)
            return
        gate = await self.gate.of(message.team)
        if gate is None:
            log.warning("a shortcut ignored: the app is not installed in %s", message.team)
            return
        threaded = "thread_ts" in event
        if await gate.admit(message.team, key, event["user"], message.event_id, threaded) is None:
            return
        text = clean_user_text(event.get("text", ""), bot_user_id)
        entry = await self.recorder.record(
            key,
            UserContent(userid=f"<@{event['user']}>", text=text),
            meta=EntryMeta(event_id=message.event_id, wants_answer=True, addressed=True),
        )
        if entry is not None:
            self.scheduler.request(
                key, AnswerRequest(entry.index, event["ts"], bot_user_id, addressed=True)
            )

    async def edited(
        self, team: str, event: dict[str, Any], event_id: str | None, bot_user_id: str | None
    ) -> None:
        new, old = event["message"], event.get("previous_message", {})
        if new.get("text") == old.get("text"):
            return  # Slack also sends message_changed when it adds a link preview
        key = thread_key(team, event["channel"], new)
        if not await self._recorded(key, new["ts"]):
            return
        userid = f"<@{new.get('user') or old.get('user') or 'unknown'}>"
        text = clean_user_text(new.get("text", ""), bot_user_id)  # as the message was recorded
        await self.recorder.record(
            key,
            f"{userid} edited their message from {slack_time(new['ts'])}. New text:\n{text}",
            meta=EntryMeta(event_id=event_id),
        )
        await self._remember(key, ThreadMessage(new["ts"], userid, text))

    async def deleted(self, team: str, event: dict[str, Any], event_id: str | None) -> None:
        old = event.get("previous_message", {})
        ts = event["deleted_ts"]
        key = thread_key(team, event["channel"], {"ts": ts, **old})
        if not await self._recorded(key, ts):
            return
        userid = f"<@{old.get('user') or 'unknown'}>"
        await self.recorder.record(
            key,
            f"{userid} deleted their message from {slack_time(ts)}.",
            meta=EntryMeta(event_id=event_id),
        )
        await self.recorder.call(self.recorder.store.forget_message, key, ts)

    async def viewing_changed(self, team: str, event: dict[str, Any]) -> None:
        """app_context_changed (its fields checked): kept until the person writes next."""
        entities = event["context"].get("entities") or []
        where = (team, event["channel"], event["user"])
        await self.recorder.call(self.recorder.store.keep_viewing, *where, entities)

    async def _note_viewing(
        self,
        team: str,
        key: ThreadKey,
        event: dict[str, Any],
        bot_user_id: str | None,
        deadline: float,
        persona: Callable[[], str],
    ) -> None:
        """What the person views, if it changed since it was last in a log: a system entry in
        this thread, before their message; entry 0 from `persona` (the DM's, as their message
        would have it) if the note starts the thread."""
        store, user = self.recorder.store, event["user"]
        viewing = await self.recorder.read(store.viewing, team, event["channel"], user)
        if viewing is None:
            return
        content = await self.content.of(team)
        if content is None:
            return
        text = await viewing_text(
            viewing.entities, team, user, content.client, content.links, bot_user_id, deadline
        )
        opening = self.recorder.opening(persona)
        await self.recorder.record_by(
            store.record_viewing, key, user, viewing.version, text, opening
        )

    async def _in_thread(self, key: ThreadKey) -> bool:
        return await self.recorder.read(self.recorder.store.has_thread, key)

    async def _recorded(self, key: ThreadKey, ts: str) -> bool:
        return await self.recorder.read(self.recorder.store.has_message, key, ts)

    async def _remember(self, key: ThreadKey, message: ThreadMessage) -> None:
        """The thread's copy of the message, for getThreadHistory (see assistant.slack.history)."""
        await self.recorder.call(self.recorder.store.remember_messages, key, [message])
