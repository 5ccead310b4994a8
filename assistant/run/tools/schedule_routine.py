"""scheduleRoutine: propose a routine the person being answered asked for
(docs/log-format.md#routines). The schedule is checked as `assistant routines add` checks it
(`asked_schedule`); a bad one is the call's result, for the model to read. A good one is posted
in the thread with **Confirm** and **Cancel** for that person only (the click:
`assistant/intake/routine_buttons.py`); nothing is scheduled until they confirm, and the run
goes on meanwhile. The buttons carry only the call's entry index: the routine's fields are
read back from the recorded call, its asker from the result recorded right after it."""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from assistant.i18n.words import N_, Words
from assistant.run.core.lease import ensure_lease
from assistant.slack.connection import SLACK_FAILURES, slack_reason
from assistant.slack.text import neutralize_mentions
from context.storage.schedule import ScheduleError, asked_prompt, asked_schedule, once_schedule
from context.toolcalls import ScheduleRoutine

if TYPE_CHECKING:
    from assistant.run.core.run_context import RunContext

log = logging.getLogger(__name__)

CONFIRM = "routine_confirm"  # the buttons' action_ids; each value is the call's entry index
CANCEL = "routine_cancel"
ASK = N_("Schedule this routine? {prompt} {schedule}")
CRON_IN = N_("(cron {cron}, in {tz})")
CRON_THEIRS = N_("(cron {cron}, in your time zone)")
ONCE_AT = N_("(once, at {at} UTC)")
CONFIRM_LABEL = N_("Confirm")
CANCEL_LABEL = N_("Cancel")

WAITS = (
    "Proposed as a routine (entry {index}), waiting for <@{user}> to confirm it with the "
    "buttons in the thread; nothing is scheduled until then."
)
# How the click finds who may confirm: the result recorded right after the call.
WAITS_PATTERN = re.compile(
    r"^Proposed as a routine \(entry ([0-9]{1,12})\), waiting for <@([UW][A-Z0-9]{1,20})>"
)
NOT_PROPOSED = "Error: not proposed: {why}."
NO_PERSON = "a routine is proposed only to the person answered, in a channel's thread"
NOT_POSTED = "the buttons could not be posted ({why})"


def schedule_words(call: ScheduleRoutine, words: Words) -> str:
    if call.at is not None:
        when = once_schedule(call.at, datetime.min.replace(tzinfo=UTC)).at
        assert when is not None
        return words.gettext(ONCE_AT, at=when.strftime("%Y-%m-%d %H:%M"))
    if call.tz is None:
        return words.gettext(CRON_THEIRS, cron=call.cron)
    return words.gettext(CRON_IN, cron=call.cron, tz=call.tz)


def proposal_blocks(
    call: ScheduleRoutine, index: int, words: Words
) -> tuple[str, list[dict[str, Any]]]:
    prompt = neutralize_mentions(call.prompt, 0)
    text = words.gettext(ASK, prompt=prompt, schedule=schedule_words(call, words))

    def button(action: str, label: str, style: str | None) -> dict[str, Any]:
        shown = {"type": "plain_text", "text": words.gettext(label)}
        made = {"type": "button", "action_id": action, "value": str(index), "text": shown}
        return {**made, "style": style} if style else made

    return text, [
        {"type": "section", "text": {"type": "plain_text", "text": text, "emoji": False}},
        {
            "type": "actions",
            "elements": [
                button(CONFIRM, CONFIRM_LABEL, "primary"),
                button(CANCEL, CANCEL_LABEL, None),
            ],
        },
    ]


async def schedule_routine(call: ScheduleRoutine, ctx: RunContext, index: int) -> str | None:
    user = ctx.asker
    if user is None or ctx.client is None or ctx.key.channel.startswith("D"):
        return NOT_PROPOSED.format(why=NO_PERSON)
    try:
        asked_prompt(call.prompt)
        asked_schedule(call.cron, call.tz, call.at, datetime.now(UTC))
    except ScheduleError as exc:
        return NOT_PROPOSED.format(why=exc)
    text, blocks = proposal_blocks(call, index, ctx.words)
    ensure_lease()  # a run past its lease's deadline proposes nothing
    try:
        await ctx.client.chat_postMessage(
            channel=ctx.key.channel,
            thread_ts=ctx.key.thread_ts,
            text=text,
            blocks=blocks,
            **ctx.post_as,
        )
    except SLACK_FAILURES as exc:
        log.warning("the routine proposed at entry %s was not posted: %s", index, slack_reason(exc))
        return NOT_PROPOSED.format(why=NOT_POSTED.format(why=slack_reason(exc)))
    return WAITS.format(index=index, user=user)
