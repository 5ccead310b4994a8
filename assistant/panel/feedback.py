"""Feedback on answers (docs/log-format.md#feedback): the last message of every answer ends
with Slack's feedback buttons (a `context_actions` block with a `feedback_buttons` element); a
click is recorded as a system entry and kept as the person's latest vote on that answer. It
starts no run.

Each button's value names its vote and the answer's postMessage entry (`good:12`), so a click
finds its answer without asking Slack. A click is recorded once: Slack's payload delivered
again has the same `action_ts` (the entry's event id), and a second click on the same button
changes no vote.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from assistant.intake.event_shapes import ClickPlace
from assistant.intake.link_access import LinkAccess
from assistant.panel.events import slack_failure
from assistant.run.core.recorder import Recorder
from assistant.run.progress.feedback_buttons import VOTES
from assistant.slack.connection import SLACK_FAILURES
from assistant.slack.workspaces import PerWorkspace
from context.entry import now_timestamp
from context.storage import EntryMeta, ThreadKey, Vote

log = logging.getLogger(__name__)

# Entries' indexes are 32-bit integers in the store (PostgreSQL's `integer`): a larger one
# names no answer, and the database would refuse even to look it up.
MAX_INDEX = 2**31 - 1


def parse_value(value: str) -> tuple[str, int] | None:
    """A button's value as (vote, answer index); None when it is not one of ours."""
    vote, _, index = value.partition(":")
    if vote not in VOTES or not index.isdecimal() or len(index) > 10 or int(index) > MAX_INDEX:
        return None
    return vote, int(index)


@dataclass(frozen=True)
class Feedback:
    recorder: Recorder  # the events' recorder: a click is written before Slack is answered
    # Who may rate an answer: who can see its thread, by the rule of linked messages (a
    # public channel of the workspace, or a conversation the person is a member of).
    access: PerWorkspace[LinkAccess]  # each workspace's, with its token

    async def clicked(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A `block_actions` payload of a feedback button: the click recorded (once), or,
        for a click that names no answer of its thread, a line in the console log."""
        parsed = parse_value(str(action.get("value", "")))
        message = _object(body.get("message"))
        person = _object(body.get("user"))
        channel = _object(body.get("channel")).get("id") or _object(body.get("container")).get(
            "channel_id"
        )
        team = _object(body.get("team")).get("id") or person.get("team_id")
        thread_ts = message.get("thread_ts") or message.get("ts")
        try:
            # The ids are checked as a message's are (`assistant.intake.event_shapes`).
            where = ClickPlace.model_validate(
                {"team": team, "channel": channel, "thread_ts": thread_ts, "user": person.get("id")}
            )
        except ValidationError:
            where = None
        if parsed is None or where is None:
            # Signed by Slack but not a click on one of our answers: nothing to record.
            log.warning("a feedback click without an answer to rate was ignored: %r", action)
            return
        vote, index = parsed
        key = ThreadKey(where.team, where.channel, where.thread_ts)
        if not await self._may_rate(key, where.user):
            return
        user = f"<@{where.user}>"
        text = f"{user} rated the answer of entry {index}: {vote}."
        # Slack gives each click its own action_ts: the same payload again is the same click.
        meta = EntryMeta(event_id=f"feedback {where.user} {action.get('action_ts')}")
        try:
            await self.recorder.record_by(
                self.recorder.store.record_vote,
                key,
                Vote(index, user, vote),
                text,
                now_timestamp(),
                meta,
            )
        except ValueError as exc:
            log.warning("a feedback click was ignored: %s", exc)
            return
        await self.recorder.voted(key, index, vote)

    async def _may_rate(self, key: ThreadKey, user: str) -> bool:
        """Whether `user` can see the thread, so that their click may count; else one line
        saying why not. When Slack cannot tell, the click is not counted (fail closed, as
        for linked messages)."""
        try:
            access = await self.access.of(key.team)
            if access is not None and await access.may_see(key.team, user, key.channel):
                return True
            why = "they cannot see the thread"
        except SLACK_FAILURES as exc:
            why = f"Slack could not say whether they can see the thread: {slack_failure(exc)}"
        log.warning("a feedback click by %s in thread %s was not recorded: %s", user, key, why)
        return False


def _object(value: Any) -> dict[str, Any]:
    """A payload's part that should be an object, or {} when Slack's payload lacks it."""
    return value if isinstance(value, dict) else {}
