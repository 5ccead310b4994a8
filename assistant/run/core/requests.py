"""What a run is asked to answer: here, below the agent that answers it and the scheduler
that hands it over, so that neither imports the other for it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AnswerRequest:
    """A user entry that should be answered, and the Slack message it came from."""

    index: int
    message_ts: str
    bot_user_id: str | None = None
    trace_context: str | None = None  # the span that recorded it (telemetry), if any
    addressed: bool = False  # a mention or a DM, not a follow-up (EntryMeta.addressed)
    routine: int | None = None  # the routine whose run asks it (assistant/routines/runs.py)
