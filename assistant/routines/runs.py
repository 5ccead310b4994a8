"""A routine's run: a new top-level message in its channel, posted by the bot and naming the
routine, whose thread gets a log of its own; its first user entry is the routine's prompt,
in the creator's name, and the run that answers it is the channel's usual one (persona,
model, tools, access), asked of the scheduler as a mention's is. A creator who may no longer
use the bot there, or who left the workspace, pauses the routine instead, and says why."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.languages import chosen
from assistant.i18n.words import ENGLISH, Words
from assistant.run.channels.channel_rules import Channels
from assistant.run.channels.languages import Languages
from assistant.run.core.recorder import Recorder
from assistant.run.core.requests import AnswerRequest
from assistant.run.loop.channel_access import ChannelAccess
from assistant.slack.history import slack_time
from assistant.slack.text import neutralize_mentions
from context.entry import UserContent
from context.render import printable
from context.storage import EntryMeta, Routine, RoutineStore, ThreadKey

log = logging.getLogger(__name__)


def heading(routine: Routine, words: Words = ENGLISH) -> str:
    """The top-level message a run starts with: which routine, whose, and what it asks. The
    prompt is anyone's text posted by the bot on a schedule: its broadcasts and user groups
    (`<!channel>`, `<!subteam^…>`) are made words that ping nobody, every run again."""
    prompt = neutralize_mentions(routine.prompt)
    if routine.creator is None:
        return words.gettext("⏰ Routine {id}: {prompt}", id=routine.id, prompt=prompt)
    return words.gettext(
        "⏰ Routine {id} of {creator}: {prompt}",
        id=routine.id,
        creator=f"<@{routine.creator}>",
        prompt=prompt,
    )


def pause_note(routine: Routine, reason: str, words: Words = ENGLISH) -> str:
    """The direct message telling the creator their routine paused (the reason is the one
    the store keeps, in English: `assistant routines` shows the same)."""
    return words.gettext(
        "Your routine {id} in {channel} is paused: {reason}. Resume it once that is fixed.",
        id=routine.id,
        channel=f"<#{routine.channel}>",
        reason=reason,
    )


def entry_text(routine: Routine) -> str:
    """The first user entry's text (docs/log-format.md, "A routine's entry")."""
    return f"[routine {routine.id}] {routine.prompt}"


class Stop(Exception):
    """A run that must not start: the routine pauses, for this reason."""


@dataclass
class RoutineRuns:
    store: RoutineStore
    recorder: Recorder
    request: Callable[[ThreadKey, AnswerRequest], None]  # RunScheduler.request
    channels: Channels
    client_of: Callable[[str], Awaitable[AsyncWebClient | None]]
    access_of: Callable[[str], Awaitable[ChannelAccess | None]]
    pause_after: int
    bot_user_id: str | None = None
    # The heading in the channel's language, the pause note in the creator's
    # (docs/configuration.md, "Languages").
    languages: Languages = field(default_factory=Languages)

    async def start(self, routine: Routine) -> None:
        """Never raises: how it went is the routine's last run; failures in a row past
        `pause_after` pause it, and its creator is told."""
        client = await self.client_of(routine.team)
        try:
            if client is None:
                raise RuntimeError(f"the app is not installed in {routine.team}")
            ts = await self._start(client, routine)
        except Stop as stop:
            reason = str(stop)
            await self.recorder.call(self.store.pause_routine, routine.id, reason)
            await self.recorder.call(
                self.store.routine_ran, routine.id, None, f"paused: {reason}", False, 10**6
            )
            await self._tell(client, routine, reason)
            return
        except Exception as exc:  # a Slack failure, the store: counted, not the tick's end
            outcome = f"failed: {_reason(exc)}"
            log.warning("routine %s: %s", routine.id, outcome)
            ran = await self.recorder.call(
                self.store.routine_ran, routine.id, None, outcome, False, self.pause_after
            )
            if ran is not None and ran.paused:
                await self._tell(client, routine, ran.paused_reason or outcome)
            return
        await self.recorder.call(
            self.store.routine_ran, routine.id, ts, "started", True, self.pause_after
        )

    async def _start(self, client: AsyncWebClient, routine: Routine) -> str:
        rules = await self.channels.rules(routine.team, routine.channel)
        if not rules.enabled:
            raise Stop(f"the bot is off in {routine.channel}")
        if routine.creator is not None:
            info = await client.users_info(user=routine.creator)
            user = info.get("user") or {}
            if user.get("deleted"):
                raise Stop(f"<@{routine.creator}> left the workspace")
            access = await self.access_of(routine.team)
            if access is None or not await access.may_use(routine.team, routine.creator, rules):
                raise Stop(
                    f"<@{routine.creator}> may no longer use the bot in <#{routine.channel}>"
                )
        words = Words(chosen(rules.locale, rules.workspace_locale, self.languages.default))
        posted = await client.chat_postMessage(
            channel=routine.channel, text=heading(routine, words), **rules.post_as
        )
        ts = str(posted["ts"])
        key = ThreadKey(routine.team, routine.channel, ts)
        entry = await self.recorder.record_message(
            key,
            UserContent(userid=f"<@{routine.creator}>", text=entry_text(routine)),
            slack_time(ts),
            EntryMeta(slack_ts=ts, wants_answer=True, addressed=True),
            rules.persona,
        )
        if entry is None:
            raise RuntimeError(f"the thread {key} has a log already")
        self.request(
            key,
            AnswerRequest(entry.index, ts, self.bot_user_id, addressed=True, routine=routine.id),
        )
        return ts

    async def _tell(self, client: AsyncWebClient | None, routine: Routine, reason: str) -> None:
        """A direct message to the creator: their routine is paused, and why."""
        if client is None or routine.creator is None:
            return
        try:
            spoken = await self.languages.person(client, routine.team, routine.creator)
            text = pause_note(routine, reason, spoken.words)
            await client.chat_postMessage(channel=routine.creator, text=text)
        except SlackApiError as exc:
            log.warning("routine %s: cannot tell its creator: %s", routine.id, _reason(exc))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SlackApiError):
        return f"Slack said {printable(str(exc.response.get('error')))}"
    return printable(str(exc) or type(exc).__name__)[:200]
