"""`conversations.replies` and `conversations.history` for `FakeSlack`: threads and channel
history as the store holds them, and seeding them (`add_message`, `thread`).

(`conversations.info` and `.members`, which need conversations declared, are in
`assistant.fakes.slack.conversations`; messages need no declaration.)
"""

from __future__ import annotations

import threading
from typing import Any

from assistant.fakes import ids
from assistant.fakes.slack.params import Handler, flag, required
from assistant.fakes.slack.store import SlackError, SlackStore


class HistoryMethods:
    """Part of `FakeSlack`, which sets the attributes declared here."""

    store: SlackStore
    team_id: str
    app_id: str
    _cond: threading.Condition

    def _history_methods(self) -> dict[str, Handler]:
        return {
            "conversations.replies": self._conversations_replies,
            "conversations.history": self._conversations_history,
        }

    def add_message(
        self,
        channel: str,
        ts: str | None = None,
        user: str | None = ids.USER_ID,
        text: str = "",
        thread_ts: str | None = None,
        bot_id: str | None = None,
        files: list[dict[str, Any]] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Seed a message (a thread parent, or a reply when `thread_ts` is given)."""
        message: dict[str, Any] = {"ts": ts or ids.next_ts(), "text": text, "team": self.team_id}
        if user is not None:
            message["user"] = user
        if thread_ts is not None:
            message["thread_ts"] = thread_ts
        if bot_id is not None:
            message.update(bot_id=bot_id, app_id=self.app_id)
        if files is not None:
            message.update(files=files, upload=False)
        message.update(extra)
        with self._cond:
            return self.store.add(channel, message)

    def thread(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        """The stored thread, parent first, as `conversations.replies` would show it."""
        with self._cond:
            return self.store.thread(channel, thread_ts)

    def _conversations_replies(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = required(params, "channel", "channel_not_found")
        ts = required(params, "ts", "thread_not_found")
        try:
            limit = min(max(int(params.get("limit") or 1000), 1), 1000)
        except ValueError as exc:
            raise SlackError("invalid_limit") from exc
        page = self.store.replies_page(
            channel,
            ts,
            limit=limit,
            cursor=params.get("cursor") or None,
            oldest=params.get("oldest") or None,
            latest=params.get("latest") or None,
            inclusive=flag(params.get("inclusive")),
        )
        if not flag(params.get("include_all_metadata")):
            # Like Slack: messages carry their metadata only when it is asked for.
            for message in page["messages"]:
                message.pop("metadata", None)
        return page

    def _conversations_history(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = required(params, "channel", "channel_not_found")
        try:
            limit = min(max(int(params.get("limit") or 100), 1), 999)
        except ValueError as exc:
            raise SlackError("invalid_limit") from exc
        return self.store.history_page(
            channel,
            limit=limit,
            oldest=params.get("oldest") or None,
            latest=params.get("latest") or None,
            inclusive=flag(params.get("inclusive")),
        )
