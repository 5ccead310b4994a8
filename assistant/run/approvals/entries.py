"""A person's approval of a tool call that may change something
(docs/log-format.md#approvals): the log's entries that record it, read back from the log
(the single record: a resumed run and a click in any process read the same facts), and the
message with its Allow / Deny buttons.

A button's value binds the click to its thread, the call's entry, the person who must decide
and the expiry; the click is checked against the log, never trusted on its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from assistant.i18n.words import ENGLISH, Words
from context.entry import STOP_PREFIX, Entry, SystemEntry, format_timestamp

ALLOW = "approval_allow"
DENY = "approval_deny"
ACTION_IDS = (ALLOW, DENY)
Decision = Literal["allowed", "denied"]
Outcome = Decision | Literal["expired", "stopped"]  # what the buttons' message says at the end

REQUESTED = (
    "Approval requested: {name} (entry {index}) waits for <@{user}> to allow or deny it "
    "until {until} (message {ts}). Arguments: {arguments}"
)
DECIDED = "Approval of {name} (entry {index}): {decision} by <@{user}> at {at}."
CLICK_REFUSED = (
    "Approval of {name} (entry {index}): a click by <@{user}> at {at} was refused: only "
    "<@{requester}> may decide."
)
DENIED = "Not carried out: {name} (entry {index}) was denied by <@{user}> at {at}."
EXPIRED = "Not carried out: {name} (entry {index}): no one allowed it before {until}; it expired."
STOPPED = "Not carried out: {name} (entry {index}): the request was stopped by <@{user}> at {at}."
_STOPPED_RESULT = "Not carried out: {name} (entry {index}): the request was stopped by "
# Recorded once a call a person allowed is about to be made, before the request leaves: a call
# with this entry and no result may have been carried out (assistant/run/approvals/unfinished.py).
STARTED = "Calling {name} (entry {index}) at {at}."
NO_ONE_TO_ASK = (
    "Error: {name} (entry {index}) failed: it needs the approval of the person who asked, "
    "and no person's message is being answered; it was not called"
)
# What a call's result entry starts with: once one follows the request, nothing waits.
RESULT_PREFIXES = (
    "Result of {name} (entry {index})",
    "Error: {name} (entry {index})",
    "Not carried out: {name} (entry {index})",
)
_REQUESTED = re.compile(
    r"^Approval requested: (?P<name>\S+) \(entry (?P<index>\d+)\) waits for "
    r"<@(?P<user>[A-Z0-9]+)> to allow or deny it until (?P<until>\S+) "
    r"\(message (?P<ts>[0-9.]+|none)\)\."
)
_DECIDED = re.compile(
    r"^Approval of (?P<name>\S+) \(entry (?P<index>\d+)\): (?P<decision>allowed|denied) by "
    r"<@(?P<user>[A-Z0-9]+)> at (?P<at>\S+)\.$"
)
_STARTED = re.compile(r"^Calling (?P<name>\S+) \(entry (?P<index>\d+)\) at \S+\.$")
# The entries of a wait, which are not the call's result (the task cards: progress/steps.py).
# A person's sign-in to an MCP server waits the same way (assistant/run/approvals/sign_in.py).
WAIT_PREFIXES = ("Approval requested: ", "Approval of ", "Sign-in requested: ", "Sign-in of ")
STARTED_PREFIX = "Calling "  # nor is the entry that says an allowed call is being made
BEFORE_RESULT = (*WAIT_PREFIXES, STARTED_PREFIX)  # what may lie between a call and its result
REFUSED_PREFIX = "Not carried out: "
MAX_ARGUMENTS = 1_500  # characters of the arguments shown in the message and the entry
_VALUE = re.compile(
    r"^(?P<channel>[A-Z0-9]+)\|(?P<thread>\d+\.\d+)\|(?P<index>\d{1,9})\|"
    r"(?P<user>[A-Z0-9]+)\|(?P<until>\d{1,12})$"
)
_TIME = "%Y-%m-%dT%H:%M:%SZ"


@dataclass(frozen=True, kw_only=True)
class Pending:
    """A call that waits for, or has, a person's decision and has no result yet."""

    name: str
    index: int  # the call's entry
    requester: str  # the Slack user id who must decide
    until: datetime
    message_ts: str | None  # the message with the buttons
    decision: Decision | None = None
    decided_by: str | None = None
    decided_at: str | None = None
    started: bool = False  # allowed, and its call made (STARTED): it may have been carried out

    def expired(self, now: datetime) -> bool:
        return self.decision is None and now >= self.until


def pending_approval(entries: Sequence[Entry]) -> Pending | None:
    """The call of the log that waits for a decision or for its result, if any. A stop ends
    the wait (a log recorded before the stop said so of the call: nothing more is done)."""
    found: Pending | None = None
    for entry in entries:
        if not isinstance(entry, SystemEntry):
            continue
        text = entry.content
        if (match := _REQUESTED.match(text)) is not None:
            ts = match["ts"]
            found = Pending(
                name=match["name"],
                index=int(match["index"]),
                requester=match["user"],
                until=_moment(match["until"]),
                message_ts=None if ts == "none" else ts,
            )
        elif found is None:
            continue
        elif (match := _DECIDED.match(text)) is not None and int(match["index"]) == found.index:
            if found.decision is None:
                decision: Decision = "allowed" if match["decision"] == "allowed" else "denied"
                found = replace(
                    found, decision=decision, decided_by=match["user"], decided_at=match["at"]
                )
        elif (match := _STARTED.match(text)) is not None and int(match["index"]) == found.index:
            if found.decision == "allowed":
                found = replace(found, started=True)
        elif text.startswith(STOP_PREFIX) or any(
            text.startswith(r.format(name=found.name, index=found.index)) for r in RESULT_PREFIXES
        ):
            found = None
    return found


def stopped_request(entries: Sequence[Entry], index: int) -> bool:
    """Whether the approval asked for the call of entry `index` ended with a stop."""
    name: str | None = None  # the call's, once its approval was asked for
    for entry in entries:
        if not isinstance(entry, SystemEntry):
            continue
        text = entry.content
        if name is None:
            if (match := _REQUESTED.match(text)) is not None and int(match["index"]) == index:
                name = match["name"]
        elif text.startswith(STOP_PREFIX):
            return True
        elif any(text.startswith(r.format(name=name, index=index)) for r in RESULT_PREFIXES):
            return text.startswith(_STOPPED_RESULT.format(name=name, index=index))
    return False


def requested_text(
    name: str, index: int, user: str, until: datetime, ts: str | None, arguments: dict[str, Any]
) -> str:
    return REQUESTED.format(
        name=name,
        index=index,
        user=user,
        until=format_timestamp(until),
        ts=ts or "none",
        arguments=shown_arguments(arguments),
    )


def decided_text(pending: Pending, decision: Decision, user: str, at: datetime) -> str:
    return DECIDED.format(
        name=pending.name,
        index=pending.index,
        decision=decision,
        user=user,
        at=format_timestamp(at),
    )


def refused_click_text(pending: Pending, user: str, at: datetime) -> str:
    return CLICK_REFUSED.format(
        name=pending.name,
        index=pending.index,
        user=user,
        at=format_timestamp(at),
        requester=pending.requester,
    )


def stopped_text(pending: Pending, user: str, at: datetime) -> str:
    """The result of a call whose request was stopped before it was made."""
    return STOPPED.format(
        name=pending.name, index=pending.index, user=user, at=format_timestamp(at)
    )


def started_text(pending: Pending, at: datetime) -> str:
    return STARTED.format(name=pending.name, index=pending.index, at=format_timestamp(at))


def not_carried_out(pending: Pending) -> str:
    """The result the model reads for a call denied or expired."""
    if pending.decision == "denied":
        return DENIED.format(
            name=pending.name, index=pending.index, user=pending.decided_by, at=pending.decided_at
        )
    return EXPIRED.format(
        name=pending.name, index=pending.index, until=format_timestamp(pending.until)
    )


def shown_arguments(arguments: dict[str, Any]) -> str:
    """The arguments as JSON, cut: they come from the model and are shown to a person."""
    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= MAX_ARGUMENTS else text[: MAX_ARGUMENTS - 1] + "…"


def button_value(channel: str, thread_ts: str, index: int, user: str, until: datetime) -> str:
    return f"{channel}|{thread_ts}|{index}|{user}|{int(until.timestamp())}"


@dataclass(frozen=True)
class ButtonValue:
    channel: str
    thread_ts: str
    index: int
    user: str
    until: datetime


def parse_button(value: str) -> ButtonValue | None:
    """A button's value; None when it is not one of ours."""
    match = _VALUE.match(value)
    if match is None:
        return None
    until = datetime.fromtimestamp(int(match["until"]), UTC)
    return ButtonValue(match["channel"], match["thread"], int(match["index"]), match["user"], until)


def _escape(text: str) -> str:
    """Shown as code: nothing in it formats, links or mentions anyone."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace("```", "'''")


def _date(moment: datetime) -> str:
    """A moment in each reader's own time zone (Slack's date formatting)."""
    return (
        f"<!date^{int(moment.timestamp())}^{{date_short_pretty}} {{time}}|{moment.strftime(_TIME)}>"
    )


def _call_blocks(name: str, arguments: dict[str, Any], user: str, words: Words) -> list[Any]:
    ask = words.gettext(
        "<@{user}>, may I call *{tool}* with these arguments?", user=user, tool=_escape(name)
    )
    code = f"```{_escape(shown_arguments(arguments))}```"
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": ask}},
        {"type": "section", "text": {"type": "mrkdwn", "text": code}},
    ]


def request_message(
    key_channel: str,
    thread_ts: str,
    index: int,
    name: str,
    arguments: dict[str, Any],
    user: str,
    until: datetime,
    words: Words = ENGLISH,
) -> tuple[str, list[Any]]:
    """The text and blocks of the message that asks `user` to allow or deny the call."""
    value = button_value(key_channel, thread_ts, index, user, until)
    waits = words.gettext(
        "Only <@{user}> can decide, until {until}.", user=user, until=_date(until)
    )
    buttons = [
        {
            "type": "button",
            "action_id": ALLOW,
            "style": "primary",
            "value": value,
            "text": {"type": "plain_text", "text": words.gettext("Allow")},
        },
        {
            "type": "button",
            "action_id": DENY,
            "style": "danger",
            "value": value,
            "text": {"type": "plain_text", "text": words.gettext("Deny")},
        },
    ]
    blocks = [
        *_call_blocks(name, arguments, user, words),
        {"type": "context", "elements": [{"type": "mrkdwn", "text": waits}]},
        {"type": "actions", "elements": buttons},
    ]
    return words.gettext("Approval needed: {tool}", tool=name), blocks


def outcome_message(
    name: str,
    arguments: dict[str, Any],
    user: str,
    outcome: Outcome,
    at: datetime,
    words: Words = ENGLISH,
) -> tuple[str, list[Any]]:
    """The message once decided, stopped or expired: no buttons left, who decided and when
    (`user`: who stopped it, for a stop)."""
    if outcome == "allowed":
        said = words.gettext("Allowed by <@{user}> at {at}.", user=user, at=_date(at))
    elif outcome == "denied":
        said = words.gettext("Denied by <@{user}> at {at}.", user=user, at=_date(at))
    elif outcome == "stopped":
        said = words.gettext("Stopped by <@{user}> at {at}.", user=user, at=_date(at))
    else:
        said = words.gettext("Expired at {at}: no one decided.", at=_date(at))
    blocks = [
        *_call_blocks(name, arguments, user, words),
        {"type": "context", "elements": [{"type": "mrkdwn", "text": said}]},
    ]
    return said, blocks


def _moment(text: str) -> datetime:
    return datetime.strptime(text, _TIME).replace(tzinfo=UTC)
