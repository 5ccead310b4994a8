"""Agent sessions in the fake Slack: `agents.sessions.setStatus` and `agents.sessions.rename`
with Slack's rules (docs.slack.dev "Agent sessions"), `chat.stopStream`'s `session_status`, and
the stop button: what Slack does when a person presses it, and the `agent_session_stopped`
event it then sends.

- Only an app declared as an agent may have sessions: otherwise both methods answer
  `not_authorized`; `FakeSlack(agent=True)` plays an app declared so (the default: not).
- `setStatus` needs `status`, one of `active`, `processing`, `suspended`, `closed`
  (`invalid_arguments` otherwise), `channel_id` (a known channel: `channel_not_found`) and
  `thread_ts` (a message of it: `invalid_thread_ts`). It creates the thread's session if there
  is none, with its `title` (at most 200 characters) and `initiator_user_id`; both are ignored
  for a session that exists. While the app is not subscribed to `agent_session_stopped`, it
  answers with the warning `missing_agent_session_stopped_event_subscription`.
- `rename` needs a `title` of 1 to 200 characters and the thread's session
  (`session_not_found`).
- A person may rename a session in Slack (`rename_by_person`): Slack then sends
  `agent_session_title_changed` (`assistant.fakes.events.panel.title_changed`) with the new
  `title` and the `previous_title`.
- `assistant.threads.setStatus` and `setTitle` are bridged here for an agent app
  (`assistant.fakes.slack.assistant`).
- `chat.stopStream` sets the thread's session to its `session_status` (one of the same
  values), `active` when it has none: Slack's default ("The session status to set after
  stopping the stream. Default: active"), so a stream stopped mid-run without
  `processing` takes the stop button away.

The stop button (`press_stop`): shown while a session is `processing`. Slack stops the app's
streaming messages in the thread itself, keeping what they show, and sends
`agent_session_stopped` naming them (`streaming_message_ts`, empty when none); the session's
status is left to the app.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from assistant.fakes import ids
from assistant.fakes.slack.store import SlackError, SlackStore

STATUSES = frozenset({"active", "processing", "suspended", "closed"})
MAX_TITLE = 200
UNSUBSCRIBED = "missing_agent_session_stopped_event_subscription"

Handler = Callable[[dict[str, Any]], dict[str, Any]]
Thread = tuple[str, str]  # (channel, thread_ts)


@dataclass
class Session:
    title: str | None
    initiator: str | None
    statuses: list[str] = field(default_factory=list)  # every status set, in order
    renames: list[str] = field(default_factory=list)  # every title the app renamed it to

    @property
    def status(self) -> str:
        return self.statuses[-1]


class AgentSessions:
    """The threads' sessions; answers under the server's lock (reentrant)."""

    def __init__(
        self, lock: threading.Condition, store: SlackStore, bot_id: str, agent: bool = False
    ) -> None:
        self._lock = lock
        self._store = store
        self._bot_id = bot_id
        self.agent = agent  # declared as an agent in the app's settings
        self.subscribed = True  # to agent_session_stopped
        self._sessions: dict[Thread, Session] = {}

    # -- inspection ----------------------------------------------------------------------------

    def session(self, channel: str, thread_ts: str) -> Session | None:
        with self._lock:
            return self._sessions.get((channel, thread_ts))

    # -- the stop button -----------------------------------------------------------------------

    def press_stop(self, channel: str, thread_ts: str, user: str = ids.USER_ID) -> dict[str, Any]:
        """A person presses the session's stop button: the app's streaming messages in the
        thread are stopped as they are; returns the `agent_session_stopped` event."""
        with self._lock:
            stopped = []
            for message in self._store.messages.get(channel, {}).values():
                if (
                    message.get("thread_ts") == thread_ts
                    and message.get("bot_id") == self._bot_id
                    and message.get("streaming_state") == "in_progress"
                ):
                    message["streaming_state"] = "completed"
                    stopped.append(message["ts"])
        return session_stopped(channel, thread_ts, user, stopped)

    # -- Web API -------------------------------------------------------------------------------

    def methods(self) -> dict[str, Handler]:
        return {
            "agents.sessions.setStatus": self._set_status,
            "agents.sessions.rename": self._rename,
        }

    def stream_stopped(self, channel: str, thread_ts: str | None, status: Any) -> None:
        """`chat.stopStream`'s `session_status` (checked before the stream is stopped)."""
        session = self._sessions.get((channel, thread_ts or ""))
        if status is None:
            if session is not None:
                session.statuses.append("active")  # Slack's default
            return
        self._authorized()
        if status not in STATUSES:
            raise SlackError("invalid_arguments")
        if session is not None:
            session.statuses.append(status)

    def bridged_status(self, thread: Thread, status: str) -> dict[str, Any]:
        """`assistant.threads.setStatus` bridged (`assistant.fakes.slack.assistant`): a status
        already checked; a thread without a session gets one, as setStatus would give it."""
        return self._status(thread, status, None, None)

    def bridged_rename(self, thread: Thread, title: str) -> dict[str, Any]:
        """`assistant.threads.setTitle` bridged: `agents.sessions.rename`'s rules."""
        return self._renamed(thread, title)

    def rename_by_person(self, channel: str, thread_ts: str, title: str) -> str | None:
        """A person renames the thread's session in Slack; returns its previous title, for
        the `agent_session_title_changed` event Slack then sends
        (`assistant.fakes.events.panel.title_changed`)."""
        with self._lock:
            session = self._sessions.get((channel, thread_ts))
            if session is None:
                raise ValueError(f"no session in {channel}/{thread_ts}")
            previous, session.title = session.title, title
        return previous

    def _set_status(self, params: dict[str, Any]) -> dict[str, Any]:
        self._authorized()
        status = params.get("status")
        if status not in STATUSES:
            raise SlackError("invalid_arguments")
        thread = self._thread(params)
        title = params.get("title")
        if title is not None and (not isinstance(title, str) or len(title) > MAX_TITLE):
            raise SlackError("invalid_arguments")
        return self._status(thread, status, title, params.get("initiator_user_id"))

    def _status(
        self, thread: Thread, status: str, title: str | None, initiator: str | None
    ) -> dict[str, Any]:
        session = self._sessions.get(thread)
        if session is None:
            session = self._sessions[thread] = Session(title, initiator)
        session.statuses.append(status)
        answer: dict[str, Any] = {"ok": True, "status": status, "title": session.title}
        if not self.subscribed:
            answer["warning"] = UNSUBSCRIBED
        return answer

    def _rename(self, params: dict[str, Any]) -> dict[str, Any]:
        self._authorized()
        title = params.get("title")
        if not isinstance(title, str) or not 1 <= len(title) <= MAX_TITLE:
            raise SlackError("invalid_arguments")
        return self._renamed(self._thread(params), title)

    def _renamed(self, thread: Thread, title: str) -> dict[str, Any]:
        if not 1 <= len(title) <= MAX_TITLE:
            raise SlackError("invalid_arguments")
        session = self._sessions.get(thread)
        if session is None:
            raise SlackError("session_not_found")
        session.title = title
        session.renames.append(title)
        return {"ok": True, "title": title}

    def _authorized(self) -> None:
        if not self.agent:
            raise SlackError("not_authorized")

    def _thread(self, params: dict[str, Any]) -> Thread:
        channel = params.get("channel_id")
        thread_ts = params.get("thread_ts")
        if not isinstance(channel, str) or not channel or not isinstance(thread_ts, str):
            raise SlackError("invalid_arguments")
        if channel not in self._store.messages:
            raise SlackError("channel_not_found")
        if self._store.get(channel, thread_ts) is None:
            raise SlackError("invalid_thread_ts")
        return channel, thread_ts


def session_stopped(
    channel: str, thread_ts: str, user: str = ids.USER_ID, streaming: list[str] | None = None
) -> dict[str, Any]:
    """The `agent_session_stopped` event in Slack's shape (wrap it with
    `assistant.fakes.requests.event_callback`, or send it with `FakeSlack.send_event`)."""
    return {
        "type": "agent_session_stopped",
        "channel": channel,
        "thread_ts": thread_ts,
        "user": user,
        "streaming_message_ts": list(streaming or []),
        "event_ts": ids.next_ts(),
    }
