"""Slack's agent sessions (docs.slack.dev "Agent sessions"; docs/architecture.md#agent-sessions):
while a run works its thread's session is `processing` (Slack shows the stop button), after
it `active`. An app Slack does not take as an agent (`not_authorized`: not declared as one;
`unknown_method`: a Slack without sessions) shows progress as before, the :eyes: reaction or
the panel's status: the refusal is remembered per workspace for the life of the process, with
one line in its log. An app not subscribed to `agent_session_stopped` gets sessions whose stop
button does nothing (Slack shows a loading indicator instead, and warns
`missing_agent_session_stopped_event_subscription`): one line in the log per workspace says so.

Slack's changelog of 2026-08-20 moves `assistant.threads.setStatus` and `setTitle` to these
methods (the old ones bridged until `assistant_view` is removed in February 2027), and takes
only a session status: no free progress text. So where sessions apply every status and title
goes through them, and the old methods only where the workspace refused sessions. A session's
title is given once, when it is created; a person may rename it in Slack
(`agent_session_title_changed`, kept in the store), and the app never renames over that.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.slack.connection import slack_error
from context.log import ContextLog
from context.storage import ThreadKey

log = logging.getLogger(__name__)

PROCESSING = "processing"
ACTIVE = "active"
SUSPENDED = "suspended"  # a call waits for a person's approval
REFUSALS = frozenset({"not_authorized", "unknown_method"})
UNSUBSCRIBED = "missing_agent_session_stopped_event_subscription"  # setStatus's warning
NO_SESSION = "session_not_found"  # rename's answer for a thread without a session
MAX_TITLE = 200  # Slack's limit on a session's title
_PERSON = re.compile(r"<@([UW][A-Z0-9]+)>")


@dataclass
class AgentSessions:
    """The sessions of one process's runs, and the workspaces that refused them."""

    client: AsyncWebClient
    refused: dict[str, str] = field(default_factory=dict)  # team -> Slack's error
    confirmed: set[str] = field(default_factory=set)  # teams where a session call succeeded
    unsubscribed: set[str] = field(default_factory=set)  # teams warned of, once each

    def applies(self, team: str) -> bool:
        """Whether sessions are tried in the workspace (not refused so far)."""
        return team not in self.refused

    async def set(
        self, key: ThreadKey, status: str, title: str | None = None, initiator: str | None = None
    ) -> bool:
        """Set the thread's session to `status` (created with `title` and `initiator` if it
        has none); False when the workspace refuses sessions. Other Slack errors raise."""
        if not self.applies(key.team):
            return False
        try:
            answer = await self.client.agents_sessions_setStatus(
                channel_id=key.channel,
                thread_ts=key.thread_ts,
                status=status,
                title=title,
                initiator_user_id=initiator,
            )
        except SlackApiError as exc:
            self._refused(key.team, exc)
            return False
        self.confirmed.add(key.team)
        if UNSUBSCRIBED in str(answer.get("warning") or "") and key.team not in self.unsubscribed:
            self.unsubscribed.add(key.team)
            log.warning(
                "Slack warns that the app is not subscribed to agent_session_stopped in "
                "workspace %s: its stop button cannot stop runs there (see manifest.yml)",
                key.team,
            )
        return True

    async def rename(self, key: ThreadKey, title: str) -> bool | None:
        """`agents.sessions.rename`: True when renamed; None when the thread has no session
        yet (it gets `title` when a run creates it); False when the workspace refuses
        sessions. Other Slack errors raise. The caller has checked that no person titled it."""
        if not self.applies(key.team):
            return False
        try:
            await self.client.agents_sessions_rename(
                channel_id=key.channel, thread_ts=key.thread_ts, title=title
            )
        except SlackApiError as exc:
            if slack_error(exc) == NO_SESSION:
                self.confirmed.add(key.team)  # sessions answer there: it is just not made yet
                return None
            self._refused(key.team, exc)
            return False
        self.confirmed.add(key.team)
        return True

    def _refused(self, team: str, exc: SlackApiError) -> None:
        """Remember a refusal of sessions (one line per workspace, whatever runs race);
        re-raise any other error."""
        error = slack_error(exc)
        if error not in REFUSALS:
            raise exc
        if team not in self.refused:
            self.refused[team] = error
            log.warning(
                "Slack refused agent sessions in workspace %s (%s): using the older "
                "assistant.threads methods and the :eyes: reaction there instead",
                team,
                error,
            )


def session_title(log_: ContextLog) -> str | None:
    """A new session's title: the thread's first message, on one line, within Slack's limit."""
    for entry in log_.entries:
        if entry.role == "user":
            text = " ".join(str(getattr(entry.content, "text", "")).split())
            if not text:
                return None
            return text if len(text) <= MAX_TITLE else text[: MAX_TITLE - 1] + "…"
    return None


def initiator(log_: ContextLog) -> str | None:
    """The person the run answers: the author of the newest message in the log."""
    for entry in reversed(log_.entries):
        if entry.role == "user":
            match = _PERSON.fullmatch(getattr(entry.content, "userid", ""))
            return match.group(1) if match else None
    return None
