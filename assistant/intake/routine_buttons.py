"""A click on a routine proposal's **Confirm** or **Cancel** (docs/slack-features.md#routines):
only the person the proposal was made to decides; anyone else is told privately and nothing
changes. The decision is an entry of the thread, recorded once (a second click, or a click in
another process, finds it recorded and does nothing); a confirmation then creates the routine
from the recorded call (its creator the person, its zone theirs in Slack unless the call named
one), and the message says what was decided."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import N_
from assistant.intake.thread_clicks import thread_click
from assistant.run.channels.languages import Languages
from assistant.run.core.recorder import Recorder
from assistant.run.tools.schedule_routine import CONFIRM, WAITS_PATTERN
from assistant.slack.connection import SLACK_FAILURES, slack_reason
from context.entry import AssistantEntry, SystemEntry
from context.storage import EntryMeta, ThreadKey
from context.storage.async_store import async_store
from context.storage.schedule import ScheduleError, as_moment, asked_prompt, asked_schedule, zone
from context.storage.tables import moment
from context.toolcalls import ScheduleRoutine

log = logging.getLogger(__name__)

NOT_YOURS = N_("Only the person it was proposed to may confirm or cancel this routine.")
SCHEDULED = N_("Scheduled as routine {id} by <@{user}>; next run {next} UTC.")
CANCELLED = N_("Cancelled by <@{user}>: no routine was scheduled.")
FAILED = N_("Not scheduled: {why}.")
CONFIRMED_ENTRY = "<@{user}> confirmed the routine proposed at entry {index}."
SCHEDULED_ENTRY = "Routine {id} scheduled as proposed at entry {index}; next run {next} UTC."
CANCELLED_ENTRY = (
    "<@{user}> cancelled the routine proposed at entry {index}; nothing was scheduled."
)
FAILED_ENTRY = "The routine proposed at entry {index} was not scheduled: {why}."


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class RoutineButtons:
    recorder: Recorder  # the events' (its writes go first: Slack waits for the ack)
    languages: Languages

    async def clicked(
        self, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """A `block_actions` payload of a proposal's Confirm or Cancel button."""
        click = thread_click(body, action)
        if click is None:
            log.warning("a routine button that names no proposal of its thread was ignored")
            return
        team, channel, person = click.team, click.channel, click.person
        thread_ts, message_ts = click.thread_ts, click.message_ts
        index = click.number
        key = ThreadKey(team, channel, thread_ts)
        store = self.recorder.store
        entries = await async_store(store).read(store.entries, key, index)
        proposal = _proposal(entries, index)
        if proposal is None:
            log.warning("a routine button names entry %s, no proposal of its thread", index)
            return
        call, asker = proposal
        words = (await self.languages.of(client, team, person)).words
        if person != asker:
            await _tell(client, channel, person, thread_ts, words.gettext(NOT_YOURS))
            return
        # The decision is recorded first, once: a second click finds it and changes nothing.
        meta = EntryMeta(event_id=f"routine-proposal-{index}")
        if action.get("action_id") != CONFIRM:
            said = CANCELLED_ENTRY.format(user=person, index=index)
            if await self.recorder.record(key, said, meta=meta) is not None:
                await _update(client, channel, message_ts, words.gettext(CANCELLED, user=person))
            return
        said = CONFIRMED_ENTRY.format(user=person, index=index)
        if await self.recorder.record(key, said, meta=meta) is None:
            return
        tz = (
            call.tz
            if call.tz is not None or call.cron is None
            else await _their_zone(client, person)
        )
        try:
            prompt = asked_prompt(call.prompt)
            schedule, first = asked_schedule(call.cron, tz, call.at, datetime.now(UTC))
        except ScheduleError as exc:  # a time that passed while the proposal waited
            await self.recorder.record(key, FAILED_ENTRY.format(index=index, why=exc))
            await _update(client, channel, message_ts, words.gettext(FAILED, why=str(exc)))
            return
        routine = await self.recorder.call(
            store.add_routine,
            team,
            channel,
            prompt,
            person,
            cron=schedule.cron,
            tz=schedule.tz,
            at=as_moment(schedule.at),
            next_due=moment(first),
        )
        next_run = first.strftime("%Y-%m-%d %H:%M")
        done = SCHEDULED_ENTRY.format(id=routine.id, index=index, next=next_run)
        await self.recorder.record(key, done)
        shown = words.gettext(SCHEDULED, id=routine.id, user=person, next=next_run)
        await _update(client, channel, message_ts, shown)


def _proposal(entries: list[Any], index: int) -> tuple[ScheduleRoutine, str] | None:
    """The recorded call at `index` and the person its result says it waits for."""
    if len(entries) < 2 or entries[0].index != index:
        return None
    call, result = entries[0], entries[1]
    if not (isinstance(call, AssistantEntry) and isinstance(call.content, ScheduleRoutine)):
        return None
    found = WAITS_PATTERN.match(result.content) if isinstance(result, SystemEntry) else None
    if found is None or int(found.group(1)) != index:
        return None
    return call.content, found.group(2)


async def _their_zone(client: AsyncWebClient, person: str) -> str:
    """The person's zone in Slack; UTC when Slack cannot say or says what is no IANA zone."""
    try:
        info = await client.users_info(user=person)
    except SLACK_FAILURES as exc:
        log.warning("the zone of %s was not read: %s", person, slack_reason(exc))
        return "UTC"
    tz = _object(info.get("user")).get("tz")
    try:
        return zone(tz).key if isinstance(tz, str) else "UTC"
    except ScheduleError:
        return "UTC"


async def _update(client: AsyncWebClient, channel: str, ts: str, text: str) -> None:
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": text, "verbatim": True}}]
    try:
        await client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks)
    except SLACK_FAILURES as exc:
        log.warning("a routine proposal was not updated: %s", slack_reason(exc))


async def _tell(client: AsyncWebClient, channel: str, user: str, thread_ts: str, text: str) -> None:
    try:
        await client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts, text=text)
    except SLACK_FAILURES as exc:
        log.warning("%s was not told a routine is not theirs: %s", user, slack_reason(exc))
