"""Slack's assistant panel (docs/log-format.md#the-assistant-panel): the split view a person
opens from the app's icon. Its threads are threads of the app's DM, logged like any other; what
happens in the panel that the model did not do (it was opened, a greeting was shown, the person
looks at another channel, the thread got a title) is recorded as system entries, so the log
stays the one record of the thread.

What a person writes in a panel thread is recorded and answered like a DM
(`EventRecorder.message`); while a run works there, Slack shows its agent session (or, where the
workspace refused sessions, the legacy status: `assistant.run.progress.panel_status`).

The thread's title (its first message) is claimed in the store before that message is recorded,
so the run the record starts creates the session with it (`agents.sessions.setStatus`'s `title`);
where the workspace refused sessions it is set with the legacy `assistant.threads.setTitle`. A
title a person gave the session in Slack is never renamed over.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any

from slack_bolt.context.say.async_say import AsyncSay
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import (
    AsyncSetSuggestedPrompts,
)
from slack_bolt.context.set_title.async_set_title import AsyncSetTitle
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import ENGLISH
from assistant.intake.event_shapes import panel_event
from assistant.intake.events import thread_key
from assistant.panel.legacy_view import warn_once
from assistant.panel.prompts import PromptRefusals
from assistant.run.channels.channel_rules import Channels
from assistant.run.channels.languages import Languages
from assistant.run.core.recorder import Recorder
from assistant.run.core.sessions import AgentSessions
from assistant.settings.environment import Settings
from assistant.slack.connection import SLACK_FAILURES, slack_error
from assistant.slack.text import clean_user_text
from assistant.slack.workspaces import PerWorkspace
from context.entry import now_timestamp
from context.storage import EntryMeta, PanelThread, ThreadKey

log = logging.getLogger(__name__)

TITLE_CHARS = 60

# Slack's tokens as a title shows them: `<@U1|ana>` → @ana, `<#C1|general>` → #general,
# `<https://x|label>` → label, `<!here>` → @here; without a label, the id or the address.
_TOKEN = re.compile(r"<([@#!]?)([^<>|]*)(?:\|([^<>]*))?>")


@dataclass(frozen=True)
class Panel:
    settings: Settings
    recorder: Recorder  # the events' recorder: these are written before Slack is answered
    channels: Channels  # entry 0: the persona of the app's DM (the workspace's default)
    languages: Languages | None = None  # the greeting's and prompts' (None: English)
    sessions: PerWorkspace[AgentSessions] | None = None  # None: the legacy setTitle only
    prompts: PromptRefusals = field(default_factory=PromptRefusals)  # shared with MessagesTab

    async def opened(
        self,
        body: dict[str, Any],
        event: dict[str, Any],
        say: AsyncSay,
        set_suggested_prompts: AsyncSetSuggestedPrompts,
        client: AsyncWebClient | None = None,
    ) -> None:
        """assistant_thread_started: the thread's log begins (entry 0, who opened it and from
        where), then the greeting and the suggested prompts, and what was shown (`client`:
        the workspace's, to ask the person's language)."""
        warn_once(f"Slack sent {event.get('type')}")
        found = _thread(body, event)
        if found is None:
            return
        key, user, context, event_id = found
        channel = context.get("channel_id")
        where = f" from <#{channel}>" if channel else ""
        text = f"<@{user}> opened the assistant panel{where}."
        if await self._record(key, user, context, text, event_id):
            await self._greet(key, user, say, set_suggested_prompts, client)

    async def context_changed(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        """assistant_thread_context_changed: the person looks at another channel now."""
        warn_once(f"Slack sent {event.get('type')}")
        found = _thread(body, event)
        if found is None:
            return
        key, user, context, event_id = found
        channel = context.get("channel_id")
        text = (
            f"<@{user}> is now viewing <#{channel}>."
            if channel
            else f"<@{user}> is no longer viewing a channel."
        )
        await self._record(key, user, context, text, event_id)

    async def claim_title(self, team: str, event: dict[str, Any]) -> tuple[ThreadKey, str] | None:
        """The first message of a panel thread gives it its title: the person's words, cleaned
        and shortened, kept in the store before the message is recorded (the run it starts
        reads it). The thread and title to show; None for other threads and later messages."""
        title = title_of(event.get("text", ""))
        key = thread_key(team, event["channel"], event)
        if not title:
            return None
        # A read first (it never waits for SQLite's writer): most messages are not the first.
        panel = await self.recorder.read(self.recorder.store.panel, key)
        if panel is None or panel.title is not None:
            return None
        if not await self.recorder.call(self.recorder.store.claim_title, key, title):
            return None  # another delivery of the first message claimed it meanwhile
        return key, title

    async def show_title(self, key: ThreadKey, title: str, set_title: AsyncSetTitle) -> None:
        """Show the claimed title: by the thread's agent session where the workspace takes
        sessions, else by the legacy `assistant.threads.setTitle`; recorded either way."""
        sessions = await self.sessions.of(key.team) if self.sessions is not None else None
        try:
            if sessions is None or not await self._session_titled(sessions, key, title):
                await set_title(title)
        except SLACK_FAILURES as exc:
            log.warning("could not set the title of %s: %s", key, slack_failure(exc))
            await self.recorder.record(
                key, f"The conversation's title could not be set: {slack_failure(exc)}."
            )
            return
        await self.recorder.record(key, f'The conversation was titled "{title}".')

    async def _session_titled(self, sessions: AgentSessions, key: ThreadKey, title: str) -> bool:
        """False when the workspace refuses sessions (the caller falls back). Where they
        answered already, the run creates the session with the title; else `rename` asks,
        which a thread without a session yet answers `session_not_found`."""
        if not sessions.applies(key.team):
            return False
        if key.team in sessions.confirmed:
            return True
        if await self.recorder.read(self.recorder.store.session_title, key) is not None:
            return True  # a person's title: never renamed over
        return await sessions.rename(key, title) is not False

    async def _record(
        self, key: ThreadKey, user: str, context: dict[str, Any], text: str, event_id: str | None
    ) -> bool:
        """Record `text` with the panel's side metadata; False for a retried event."""
        persona = (await self.channels.rules(key.team, key.channel)).persona
        now = now_timestamp()
        recorded = await self.recorder.record_by(
            self.recorder.store.record_panel,
            key,
            PanelThread(user, context),
            text,
            now,
            EntryMeta(event_id=event_id),
            self.recorder.opening(persona, now),
        )
        return bool(recorded)

    async def _greet(
        self,
        key: ThreadKey,
        user: str,
        say: AsyncSay,
        set_suggested_prompts: AsyncSetSuggestedPrompts,
        client: AsyncWebClient | None,
    ) -> None:
        """The greeting and the prompts, and one system entry saying what the person saw (the
        model wrote none of it, so no postMessage entry holds it)."""
        words = ENGLISH
        if self.languages is not None:
            rules = await self.channels.rules(key.team, key.channel)
            words = (await self.languages.of(client, key.team, user, rules)).words
        # Shown in the person's language; the log keeps the source text, whatever it was.
        greeting = self.settings.persona.greeting_in()
        prompts = self.settings.persona.suggested_prompts_in()
        lines = []
        try:
            await say(self.settings.persona.greeting_in(words))
            lines.append(f'The app greeted <@{user}> (its words, not the model\'s): "{greeting}"')
        except SLACK_FAILURES as exc:
            lines.append(f"The greeting could not be posted: {slack_failure(exc)}.")
        if prompts and not self.prompts.applies(key.team):
            lines.append(
                "No suggested prompts were set: Slack refused them in this workspace "
                f"({self.prompts.refused[key.team]})."
            )
        elif prompts:
            try:
                shown_prompts = self.settings.persona.suggested_prompts_in(words)
                await set_suggested_prompts([prompt.model_dump() for prompt in shown_prompts])
                shown = "; ".join(f'"{p.title}" (sends "{p.message}")' for p in prompts)
                lines.append(f"Suggested prompts shown: {shown}.")
            except SLACK_FAILURES as exc:
                self.prompts.note(key.team, exc)
                lines.append(f"The suggested prompts could not be shown: {slack_failure(exc)}.")
        await self.recorder.record(key, "\n".join(lines))


def _thread(
    body: dict[str, Any], event: dict[str, Any]
) -> tuple[ThreadKey, str, dict[str, str], str | None] | None:
    """An assistant event's thread (the DM and its thread ts), person, context (only its
    checked fields) and event id; None, after one warning naming what is wrong (never a
    traceback, so Slack does not retry it), when a signed event's ids are not Slack's
    (`assistant.intake.event_shapes`, the check of message events)."""
    found = panel_event(body, event)
    if found is None:
        return None
    thread = found.event["assistant_thread"]
    key = ThreadKey(found.team, thread["channel_id"], thread["thread_ts"])
    return key, thread["user_id"], thread["context"], found.event_id


def title_of(text: str) -> str:
    """A conversation's title from its first message: Slack's tokens as people read them,
    cleaned as a recorded text is, on one line, at most TITLE_CHARS characters (cut at a
    word)."""

    def readable(match: re.Match[str]) -> str:
        kind, target, label = match.group(1), match.group(2), match.group(3)
        if kind in ("@", "#"):
            return kind + (label or target)
        if kind == "!":
            return "@" + (label or target.split("^")[0])
        return label or target

    # Tokens first: in Slack's text a literal `<` is escaped, so every `<…>` is a token.
    words = " ".join(clean_user_text(_TOKEN.sub(readable, text), None).split())
    if len(words) <= TITLE_CHARS:
        return words
    cut = words[: TITLE_CHARS - 1]
    space = cut.rfind(" ")
    if space > TITLE_CHARS // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:") + "…"


def slack_failure(exc: BaseException) -> str:
    """A Slack call's failure in a few words, for the log: its error code and method."""
    if isinstance(exc, SlackApiError):
        url = getattr(exc.response, "api_url", "") or ""
        method = url.rstrip("/").rsplit("/", 1)[-1] or "Slack"
        return f"{slack_error(exc)} (from {method})"
    return f"Slack could not be reached ({type(exc).__name__})"
