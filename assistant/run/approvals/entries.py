"""A person's approval of a tool call that may change something
(docs/log-format.md#approvals): the log's entries that record it, read back from the log
(the single record: a resumed run and a click in any process read the same facts), and the
message with its Allow / Deny buttons.

A button's value binds the click to its thread, the call's entry, the person who must decide,
the expiry and the hash of the arguments shown; the click is checked against the log, never
trusted on its own. Grants (docs/slack-features.md#grants), standing approvals given from the
same buttons, are entries too: given, used by a later call, revoked.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from assistant.i18n.words import ENGLISH, Words
from context.entry import STOP_PREFIX, Entry, SystemEntry, format_timestamp
from context.storage import Grant

ALLOW = "approval_allow"
ALLOW_ME = "approval_allow_me"  # and a grant for the person, in this channel
ALLOW_EVERYONE = "approval_allow_everyone"  # and a grant for everyone in it (editors only)
DENY = "approval_deny"
ACTION_IDS = (ALLOW, ALLOW_ME, ALLOW_EVERYONE, DENY)
DENY_FORM = "approval_deny_reason"  # the Deny button's modal: private_metadata the button's value
REASON_BLOCK = "reason"
MAX_REASON = 500  # characters of a reason for a denial, kept on one line
ALLOWING = (ALLOW, ALLOW_ME, ALLOW_EVERYONE)
Decision = Literal["allowed", "denied"]
Outcome = Decision | Literal["expired", "stopped"]  # what the buttons' message says at the end

REQUESTED = (
    "Approval requested: {name} (entry {index}) waits for <@{user}> to allow or deny it "
    "until {until} (message {ts}; arguments {hash}{rule}). Arguments: {arguments}"
)
DECIDED = "Approval of {name} (entry {index}): {decision} by <@{user}> at {at}.{reason}"
REASON = " Reason: {reason}"  # a denial's, when the person gave one
CLICK_REFUSED = (
    "Approval of {name} (entry {index}): a click by <@{user}> at {at} was refused: only "
    "{who} may decide."
)
ARGUMENTS_REFUSED = (
    "Approval of {name} (entry {index}): a click by <@{user}> at {at} was refused: it showed "
    "other arguments than the call's (hash {shown}, not {hash})."
)
EVERYONE_REFUSED = (
    "Approval of {name} (entry {index}): a click by <@{user}> at {at} to allow it for everyone "
    "in the channel was refused: only the channel's editors may."
)
# Grants (docs/log-format.md#grants): given in the thread where a person clicked, used by a
# later call of the same tool in the same channel (in any thread), revoked by an editor.
GRANT_GIVEN = (
    "Grant {id} given by <@{by}> at {at}: {name} runs without asking for {whom} in this "
    "channel (entry {index})."
)
GRANT_USED = (
    "Allowed by grant {id}: {name} (entry {index}) runs without asking for <@{user}> (given by "
    "<@{by}> at {at} for {whom} in this channel)."
)
GRANT_REVOKED = "Grant {id} revoked by {by} at {at}: {name} asks again for {whom} in this channel."
GRANT_USED_PREFIX = "Allowed by grant "
DENIED = "Not carried out: {name} (entry {index}) was denied by <@{user}> at {at}.{reason}"
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
    r"\(message (?P<ts>[0-9.]+|none)(?:; arguments (?P<hash>[0-9a-f]{16}))?"
    r"(?:; approvers (?P<approvers>editors|usergroup:S[A-Z0-9]+))?"
    r"(?:; posted in (?P<posted>[CG][A-Z0-9]+))?\)\."
)
_DECIDED = re.compile(
    r"^Approval of (?P<name>\S+) \(entry (?P<index>\d+)\): (?P<decision>allowed|denied) by "
    r"<@(?P<user>[A-Z0-9]+)> at (?P<at>\S+)\.(?: Reason: (?P<reason>.+))?$"
)
_STARTED = re.compile(r"^Calling (?P<name>\S+) \(entry (?P<index>\d+)\) at \S+\.$")
# The entries of a wait, which are not the call's result (the task cards: progress/steps.py).
# A person's sign-in to an MCP server waits the same way (assistant/run/approvals/sign_in.py).
WAIT_PREFIXES = (
    "Approval requested: ",
    "Approval of ",
    "Grant ",
    "Sign-in requested: ",
    "Sign-in of ",
)
# Nor is the entry that says an allowed call is being made (by a click, or by a grant).
STARTED_PREFIX = ("Calling ", GRANT_USED_PREFIX)
BEFORE_RESULT = (*WAIT_PREFIXES, *STARTED_PREFIX)  # what may lie between a call and its result
REFUSED_PREFIX = "Not carried out: "
MAX_ARGUMENTS = 1_500  # characters of the arguments shown in the message and the entry
_VALUE = re.compile(
    r"^(?P<channel>[A-Z0-9]+)\|(?P<thread>\d+\.\d+)\|(?P<index>\d{1,9})\|"
    r"(?P<user>[A-Z0-9]+)\|(?P<until>\d{1,12})(?:\|(?P<hash>[0-9a-f]{16}))?$"
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
    arguments_hash: str | None = None  # of the arguments shown (None: a log from before)
    approvers: str = "asker"  # who may decide: "asker" (`requester`), "editors", "usergroup:S…"
    posted_in: str | None = None  # the channel of the buttons' message, if not the thread's
    decision: Decision | None = None
    decided_by: str | None = None
    decided_at: str | None = None
    reason: str | None = None  # a denial's, as the person gave it (one line)
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
                arguments_hash=match["hash"],
                approvers=match["approvers"] or "asker",
                posted_in=match["posted"],
            )
        elif found is None:
            continue
        elif (match := _DECIDED.match(text)) is not None and int(match["index"]) == found.index:
            if found.decision is None:
                decision: Decision = "allowed" if match["decision"] == "allowed" else "denied"
                found = replace(
                    found,
                    decision=decision,
                    decided_by=match["user"],
                    decided_at=match["at"],
                    reason=match["reason"],
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
    name: str,
    index: int,
    user: str,
    until: datetime,
    ts: str | None,
    arguments: dict[str, Any],
    approvers: str = "asker",
    posted_in: str | None = None,
) -> str:
    rule = "" if approvers == "asker" else f"; approvers {approvers}"
    rule += f"; posted in {posted_in}" if posted_in else ""
    return REQUESTED.format(
        rule=rule,
        name=name,
        index=index,
        user=user,
        until=format_timestamp(until),
        ts=ts or "none",
        hash=arguments_hash(arguments),
        arguments=shown_arguments(arguments),
    )


def arguments_hash(arguments: dict[str, Any]) -> str:
    """The call's arguments, whole (not cut as shown), as 16 hex digits of the SHA-256 of their
    canonical JSON: an approval binds to them, so a changed argument is another approval."""
    canonical = json.dumps(arguments, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def arguments_refused_text(pending: Pending, user: str, at: datetime, shown: str | None) -> str:
    return ARGUMENTS_REFUSED.format(
        name=pending.name,
        index=pending.index,
        user=user,
        at=format_timestamp(at),
        shown=shown or "none",
        hash=pending.arguments_hash,
    )


def everyone_refused_text(pending: Pending, user: str, at: datetime) -> str:
    return EVERYONE_REFUSED.format(
        name=pending.name, index=pending.index, user=user, at=format_timestamp(at)
    )


def _whom(user: str | None) -> str:
    return "everyone" if user is None else f"<@{user}>"


def grant_given_text(grant: Grant, index: int) -> str:
    return GRANT_GIVEN.format(
        id=grant.id,
        by=grant.granted_by,
        at=_stamp(grant.granted_at),
        name=grant.qualified,
        whom=_whom(grant.user),
        index=index,
    )


def grant_used_text(grant: Grant, index: int, user: str) -> str:
    return GRANT_USED.format(
        id=grant.id,
        name=grant.qualified,
        index=index,
        user=user,
        by=grant.granted_by,
        at=_stamp(grant.granted_at),
        whom=_whom(grant.user),
    )


_SLACK_USER = re.compile(r"^[UW][A-Z0-9]{2,}$")


def revoker(by: str | None) -> str:
    """Who revoked a grant as the log says it: a person of Slack (the App Home), or the
    operator of the command line as `revoke_grant` kept it."""
    if by is not None and _SLACK_USER.match(by):
        return f"<@{by}>"
    return by or "someone unknown"


def grant_revoked_text(grant: Grant) -> str:
    return GRANT_REVOKED.format(
        id=grant.id,
        by=revoker(grant.revoked_by),
        at=_stamp(grant.revoked_at or ""),
        name=grant.qualified,
        whom=_whom(grant.user),
    )


def grant_used(entries: Sequence[Entry], name: str, index: int) -> bool:
    """Whether a grant let the call of entry `index` run (it may have been made)."""
    tail = f": {name} (entry {index}) "
    return any(
        isinstance(e, SystemEntry) and e.content.startswith(GRANT_USED_PREFIX) and tail in e.content
        for e in entries
    )


def _stamp(moment: str) -> str:
    """The store's microsecond moment as the log's whole seconds."""
    return moment[:19] + "Z" if len(moment) >= 19 else moment


def decided_text(
    pending: Pending, decision: Decision, user: str, at: datetime, reason: str | None = None
) -> str:
    return DECIDED.format(
        name=pending.name,
        index=pending.index,
        decision=decision,
        user=user,
        at=format_timestamp(at),
        reason=REASON.format(reason=reason) if reason else "",
    )


def clean_reason(text: object) -> str | None:
    """A reason for a denial as typed in the form: on one line (the entry's pattern reads
    it to the end of its line), control characters dropped, cut; None when empty."""
    if not isinstance(text, str):
        return None
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    if not line:
        return None
    return line if len(line) <= MAX_REASON else line[: MAX_REASON - 1] + "…"


def refused_click_text(pending: Pending, user: str, at: datetime) -> str:
    return CLICK_REFUSED.format(
        name=pending.name,
        index=pending.index,
        user=user,
        at=format_timestamp(at),
        who=deciders(pending.approvers, pending.requester),
    )


def deciders(approvers: str, requester: str) -> str:
    """Who may decide, as the log and the messages say it (mrkdwn)."""
    if approvers == "editors":
        return "the channel's editors"
    if approvers.startswith("usergroup:"):
        return f"members of <!subteam^{approvers.removeprefix('usergroup:')}>"
    return f"<@{requester}>"


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
        reason = REASON.format(reason=pending.reason) if pending.reason else ""
        return DENIED.format(
            name=pending.name,
            index=pending.index,
            user=pending.decided_by,
            at=pending.decided_at,
            reason=reason,
        )
    return EXPIRED.format(
        name=pending.name, index=pending.index, until=format_timestamp(pending.until)
    )


def shown_arguments(arguments: dict[str, Any]) -> str:
    """The arguments as JSON, cut: they come from the model and are shown to a person."""
    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= MAX_ARGUMENTS else text[: MAX_ARGUMENTS - 1] + "…"


def button_value(
    channel: str, thread_ts: str, index: int, user: str, until: datetime, hashed: str
) -> str:
    return f"{channel}|{thread_ts}|{index}|{user}|{int(until.timestamp())}|{hashed}"


@dataclass(frozen=True)
class ButtonValue:
    channel: str
    thread_ts: str
    index: int
    user: str
    until: datetime
    arguments_hash: str | None = None  # None: a button posted before approvals had one


def parse_button(value: str) -> ButtonValue | None:
    """A button's value; None when it is not one of ours."""
    match = _VALUE.match(value)
    if match is None:
        return None
    until = datetime.fromtimestamp(int(match["until"]), UTC)
    return ButtonValue(
        match["channel"], match["thread"], int(match["index"]), match["user"], until, match["hash"]
    )


def _escape(text: str) -> str:
    """Shown as code: nothing in it formats, links or mentions anyone."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace("```", "'''")


def _date(moment: datetime) -> str:
    """A moment in each reader's own time zone (Slack's date formatting)."""
    return (
        f"<!date^{int(moment.timestamp())}^{{date_short_pretty}} {{time}}|{moment.strftime(_TIME)}>"
    )


def deny_form(value: str, name: str, words: Words = ENGLISH) -> dict[str, Any]:
    """The modal the Deny button opens: an optional reason, which the model reads in the
    call's result; its private_metadata is the button's value (checked again on submit)."""
    ask = words.gettext(
        "Deny *{tool}*? You may say why: the assistant reads it.", tool=_escape(name)
    )
    return {
        "type": "modal",
        "callback_id": DENY_FORM,
        "private_metadata": value,
        "title": {"type": "plain_text", "text": words.gettext("Deny")[:24]},
        "submit": {"type": "plain_text", "text": words.gettext("Deny")[:24]},
        "close": {"type": "plain_text", "text": words.gettext("Cancel")[:24]},
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": ask}},
            {
                "type": "input",
                "block_id": REASON_BLOCK,
                "optional": True,
                "label": {"type": "plain_text", "text": words.gettext("Reason")},
                "element": {
                    "type": "plain_text_input",
                    "action_id": "value",
                    "multiline": True,
                    "max_length": MAX_REASON,
                },
            },
        ],
    }


def _call_blocks(
    name: str, arguments: dict[str, Any], user: str, words: Words, who: str | None = None
) -> list[Any]:
    if who is None:
        ask = words.gettext(
            "<@{user}>, may I call *{tool}* with these arguments?", user=user, tool=_escape(name)
        )
    else:
        ask = words.gettext(
            "{who}: may I call *{tool}* for <@{user}> with these arguments?",
            who=who,
            user=user,
            tool=_escape(name),
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
    approvers: str = "asker",
    permalink: str | None = None,
) -> tuple[str, list[Any]]:
    """The text and blocks of the message that asks `user` (or the `approvers`) to allow or
    deny the call; `permalink`: the thread's, where the message is posted elsewhere."""
    value = button_value(key_channel, thread_ts, index, user, until, arguments_hash(arguments))
    who = None if approvers == "asker" else shown_deciders(approvers, words)
    waits = words.gettext(
        "Only {who} can decide, until {until}.",
        who=who or f"<@{user}>",
        until=_date(until),
    )
    if permalink is not None and _PERMALINK.match(permalink):
        waits += " " + words.gettext("Asked in <{link}|this thread>.", link=permalink)
    buttons = [
        {
            "type": "button",
            "action_id": ALLOW,
            "style": "primary",
            "value": value,
            "text": {"type": "plain_text", "text": words.gettext("Allow once")},
        },
        {
            "type": "button",
            "action_id": ALLOW_ME,
            "value": value,
            "text": {
                "type": "plain_text",
                "text": words.gettext("Always allow for me in this channel"),
            },
        },
        {
            "type": "button",
            "action_id": ALLOW_EVERYONE,
            "value": value,
            "text": {
                "type": "plain_text",
                "text": words.gettext("Always allow for everyone in this channel"),
            },
        },
        {
            "type": "button",
            "action_id": DENY,
            "style": "danger",
            "value": value,
            "text": {"type": "plain_text", "text": words.gettext("Deny")},
        },
    ]
    if approvers != "asker":
        # "For me" is the asker's: another who decides grants for everyone or for no one.
        buttons = [b for b in buttons if b["action_id"] != ALLOW_ME]
    blocks = [
        *_call_blocks(name, arguments, user, words, who),
        {"type": "context", "elements": [{"type": "mrkdwn", "text": waits}]},
        {"type": "actions", "elements": buttons},
    ]
    return words.gettext("Approval needed: {tool}", tool=name), blocks


_PERMALINK = re.compile(r"^https://[^\s|<>]+$")


def shown_deciders(approvers: str, words: Words = ENGLISH) -> str:
    """Who may decide, in the people's language (mrkdwn)."""
    if approvers == "editors":
        return words.gettext("the channel's editors")
    group = approvers.removeprefix("usergroup:")
    return words.gettext("members of <!subteam^{group}>", group=group)


def outcome_message(
    name: str,
    arguments: dict[str, Any],
    user: str,
    outcome: Outcome,
    at: datetime,
    words: Words = ENGLISH,
    grant: Grant | None = None,
) -> tuple[str, list[Any]]:
    """The message once decided, stopped or expired: no buttons left, who decided and when
    (`user`: who stopped it, for a stop), and the grant given with the decision, if any."""
    if outcome == "allowed":
        said = words.gettext("Allowed by <@{user}> at {at}.", user=user, at=_date(at))
        if grant is not None:
            whom = words.gettext("everyone") if grant.user is None else f"<@{grant.user}>"
            said += " " + words.gettext(
                "From now on it runs without asking for {whom} in this channel (grant {id}).",
                whom=whom,
                id=grant.id,
            )
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
