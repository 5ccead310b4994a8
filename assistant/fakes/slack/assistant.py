"""The assistant panel's Web API methods in the fake Slack: `assistant.threads.setStatus`,
`setSuggestedPrompts` and `setTitle`, with Slack's argument rules, and what each last set.

slack-sdk sends setStatus and setSuggestedPrompts as JSON bodies and setTitle as parameters;
a form-encoded list arrives as a JSON string, and is read as one. A missing or malformed
argument answers `invalid_arguments`; a channel with no messages `channel_not_found`; a
thread_ts that is no message of the channel `invalid_thread_ts`. At most 4 prompts, each with a
non-empty `title` and `message`; at most 10 loading messages. An empty status clears it.

Slack's changelog of 2026-08-20 moves `setStatus` to `agents.sessions.setStatus` and `setTitle`
to `agents.sessions.rename`, with a bridge until `assistant_view` is removed (February 2027).
For an app declared as an agent (`FakeSlack(agent=True)`) the two old methods are played as
that bridge: they act on the thread's agent session with the new methods' rules. A status must
be one of the session statuses, or empty (the session goes `active`); free progress text such
as "is thinking…" is refused with `invalid_arguments`, loading messages with it. A title
renames the session (`session_not_found` when the thread has none). For an app not declared as
an agent, the old methods behave as before (the legacy view).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assistant.fakes.slack.agents import STATUSES, AgentSessions
from assistant.fakes.slack.store import SlackError, SlackStore

MAX_PROMPTS = 4
MAX_LOADING_MESSAGES = 10

Handler = Callable[[dict[str, Any]], dict[str, Any]]
Thread = tuple[str, str]  # (channel, thread_ts)


@dataclass(frozen=True)
class Status:
    status: str
    loading_messages: tuple[str, ...] = ()


@dataclass(frozen=True)
class Prompts:
    prompts: tuple[dict[str, str], ...]
    title: str | None = None


class AssistantThreads:
    """The threads' statuses, titles and suggested prompts; answers under the server's lock
    (reentrant: the handlers run under it already)."""

    def __init__(
        self, lock: threading.Condition, store: SlackStore, sessions: AgentSessions
    ) -> None:
        self._lock = lock
        self._store = store
        self._sessions = sessions  # the bridge's, for an app declared as an agent
        self._statuses: dict[Thread, Status] = {}
        self._titles: dict[Thread, str] = {}
        self._prompts: dict[Thread, Prompts] = {}

    # -- inspection ----------------------------------------------------------------------------

    def status(self, channel: str, thread_ts: str) -> Status | None:
        """The thread's status as last set (an empty `status`: cleared); None: never set."""
        with self._lock:
            return self._statuses.get((channel, thread_ts))

    def title(self, channel: str, thread_ts: str) -> str | None:
        with self._lock:
            return self._titles.get((channel, thread_ts))

    def prompts(self, channel: str, thread_ts: str) -> Prompts | None:
        with self._lock:
            return self._prompts.get((channel, thread_ts))

    # -- Web API -------------------------------------------------------------------------------

    def methods(self) -> dict[str, Handler]:
        return {
            "assistant.threads.setStatus": self._set_status,
            "assistant.threads.setSuggestedPrompts": self._set_suggested_prompts,
            "assistant.threads.setTitle": self._set_title,
        }

    def _set_status(self, params: dict[str, Any]) -> dict[str, Any]:
        thread = self._thread(params)
        status = params.get("status")
        if not isinstance(status, str):
            raise SlackError("invalid_arguments")  # required, though it may be empty
        loading = _json(params.get("loading_messages")) or []
        if self._sessions.agent:
            if loading or (status and status not in STATUSES):
                raise SlackError("invalid_arguments")  # free progress text: refused
            return self._sessions.bridged_status(thread, status or "active")
        if (
            not isinstance(loading, list)
            or len(loading) > MAX_LOADING_MESSAGES
            or not all(isinstance(text, str) and text for text in loading)
        ):
            raise SlackError("invalid_arguments")
        self._statuses[thread] = Status(status, tuple(loading))
        return {"ok": True}

    def _set_suggested_prompts(self, params: dict[str, Any]) -> dict[str, Any]:
        thread = self._thread(params, thread_required=False)
        prompts = _json(params.get("prompts"))
        if not isinstance(prompts, list) or not 1 <= len(prompts) <= MAX_PROMPTS:
            raise SlackError("invalid_arguments")
        for prompt in prompts:
            if not isinstance(prompt, dict) or not all(
                isinstance(prompt.get(name), str) and prompt[name] for name in ("title", "message")
            ):
                raise SlackError("invalid_arguments")
        title = params.get("title")
        if title is not None and not isinstance(title, str):
            raise SlackError("invalid_arguments")
        self._prompts[thread] = Prompts(tuple(prompts), title)
        return {"ok": True}

    def _set_title(self, params: dict[str, Any]) -> dict[str, Any]:
        thread = self._thread(params)
        title = params.get("title")
        if not isinstance(title, str) or not title.strip():
            raise SlackError("invalid_arguments")
        if self._sessions.agent:
            return self._sessions.bridged_rename(thread, title)
        self._titles[thread] = title
        return {"ok": True}

    def _thread(self, params: dict[str, Any], thread_required: bool = True) -> Thread:
        channel = params.get("channel_id")
        thread_ts = params.get("thread_ts")
        if not channel or (thread_required and not thread_ts):
            raise SlackError("invalid_arguments")
        if channel not in self._store.messages:
            raise SlackError("channel_not_found")
        if thread_ts and self._store.get(channel, thread_ts) is None:
            raise SlackError("invalid_thread_ts")
        return channel, thread_ts or ""


def _json(value: Any) -> Any:
    if isinstance(value, str) and value.strip().startswith(("[", "{")):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise SlackError("invalid_arguments") from exc
    return value
