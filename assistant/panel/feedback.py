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

from assistant.run.feedback_buttons import VOTES
from assistant.run.recorder import Recorder
from context.entry import now_timestamp
from context.storage import EntryMeta, ThreadKey, Vote

log = logging.getLogger(__name__)

def parse_value(value: str) -> tuple[str, int] | None:
    """A button's value as (vote, answer index); None when it is not one of ours."""
    vote, _, index = value.partition(":")
    if vote not in VOTES or not index.isdecimal():
        return None
    return vote, int(index)


@dataclass(frozen=True)
class Feedback:
    recorder: Recorder  # the events' recorder: a click is written before Slack is answered

    async def clicked(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A `block_actions` payload of a feedback button: the click recorded (once), or,
        for a click that names no answer of its thread, a line in the console log."""
        parsed = parse_value(str(action.get("value", "")))
        message = _object(body.get("message"))
        person = _object(body.get("user"))
        channel = _object(body.get("channel")).get("id") or _object(
            body.get("container")
        ).get("channel_id")
        team = _object(body.get("team")).get("id") or person.get("team_id")
        thread_ts = message.get("thread_ts") or message.get("ts")
        where = (team, channel, thread_ts, person.get("id"))
        if parsed is None or not all(isinstance(part, str) and part for part in where):
            # Signed by Slack but not a click on one of our answers: nothing to record.
            log.warning("a feedback click without an answer to rate was ignored: %r", action)
            return
        vote, index = parsed
        key = ThreadKey(team, channel, thread_ts)
        user = f"<@{person['id']}>"
        text = f"{user} rated the answer of entry {index}: {vote}."
        # Slack gives each click its own action_ts: the same payload again is the same click.
        meta = EntryMeta(event_id=f"feedback {person['id']} {action.get('action_ts')}")
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


def _object(value: Any) -> dict[str, Any]:
    """A payload's part that should be an object, or {} when Slack's payload lacks it."""
    return value if isinstance(value, dict) else {}
