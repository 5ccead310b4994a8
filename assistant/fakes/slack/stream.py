"""Streamed messages in the fake Slack: `chat.startStream`, `chat.appendStream`,
`chat.stopStream`, with Slack's argument rules and rate tiers.

- `startStream` needs `channel` and `thread_ts`; outside a DM, `recipient_user_id` and
  `recipient_team_id` too (`missing_recipient_user_id`, `missing_recipient_team_id`). It posts
  a message in the thread, in the streaming state, with the `markdown_text` given (if any).
- `appendStream` adds its `markdown_text` to a streaming message (`message_not_found`,
  `message_not_in_streaming_state` once stopped).
- `stopStream` adds its `markdown_text`, puts its `blocks` under the text, sets its
  `metadata`, and ends the streaming state; its `session_status` sets the thread's agent
  session (`assistant.fakes.slack.agents`).
- Text comes as `markdown_text` (at most 12,000 characters a call: `msg_too_long`) or as
  `chunks` (`markdown_text`, `task_update`, `plan_update`, `blocks`, checked with Slack's
  field rules in `assistant.fakes.slack.chunks`), not both in one call
  (`cannot_provide_both_markdown_text_and_chunks`), and a stream keeps the way it started
  (`streaming_mode_mismatch`). Every chunk a message received is kept in order
  (`timeline`), as Slack's timeline display shows them.
- Rate tiers, per method and workspace, over any 60 seconds: `startStream` and `stopStream`
  Tier 2 (20 calls), `appendStream` Tier 4 (100 calls); a call past its tier gets HTTP 429
  with `Retry-After` (`limits` changes them).

The message's `text` is everything streamed into it, in order; `streaming_state` is
`in_progress` or `completed`.
"""

from __future__ import annotations

import json
import math
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from assistant.fakes import ids
from assistant.fakes.slack.chat import customized
from assistant.fakes.slack.chunks import check_display_mode, chunk_text
from assistant.fakes.slack.store import SlackError, SlackStore

MAX_MARKDOWN = 12_000
WINDOW = 60.0
TIERS = {"chat.startStream": 20, "chat.appendStream": 100, "chat.stopStream": 20}

Handler = Callable[[dict[str, Any]], dict[str, Any]]


class RateLimited(Exception):
    """A call past its method's tier: HTTP 429 with Retry-After (whole seconds)."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(retry_after)
        self.retry_after = retry_after


class Streams:
    """The stream methods over the fake's message store (called under the fake's lock)."""

    def __init__(self, store: SlackStore, bot_user_id: str, bot_id: str, app_id: str) -> None:
        self.store = store
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.app_id = app_id
        self.limits = dict(TIERS)  # calls per 60 s, per method and workspace
        self._recent: dict[str, deque[float]] = {}
        self._modes: dict[tuple[str, str], str] = {}  # (channel, ts) -> "markdown_text"/"chunks"
        self.timelines: dict[tuple[str, str], list[dict[str, Any]]] = {}  # (channel, ts) -> chunks
        # chat.stopStream's session_status: (channel, thread_ts, status), checked first.
        self.session_status: Callable[[str, str | None, Any], None] = lambda *_: None

    def methods(self) -> dict[str, Handler]:
        return {
            "chat.startStream": self._start,
            "chat.appendStream": self._append,
            "chat.stopStream": self._stop,
        }

    def check_rate(self, method: str) -> None:
        """Raise RateLimited if `method` is past its tier now (a call that passes counts)."""
        limit = self.limits.get(method)
        if limit is None:
            return
        now = time.monotonic()
        recent = self._recent.setdefault(method, deque())
        while recent and recent[0] <= now - WINDOW:
            recent.popleft()
        if len(recent) >= limit:
            raise RateLimited(max(1, math.ceil(recent[0] + WINDOW - now)))
        recent.append(now)

    def _start(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel", "channel_not_found")
        thread_ts = _required(params, "thread_ts", "invalid_arguments")
        if not channel.startswith("D"):
            if not params.get("recipient_user_id"):
                raise SlackError("missing_recipient_user_id")
            if not params.get("recipient_team_id"):
                raise SlackError("missing_recipient_team_id")
        check_display_mode(params)
        mode, text = _text(params, required=False)
        if self.store.get(channel, thread_ts) is None:
            raise SlackError("message_not_found")
        message = self.store.add(
            channel,
            {
                "user": self.bot_user_id,
                "ts": ids.next_ts(),
                "bot_id": self.bot_id,
                "app_id": self.app_id,
                "text": text,
                "team": self.store.team_id,
                "thread_ts": thread_ts,
                "streaming_state": "in_progress",
                **customized(params),  # chat.startStream takes username and icon too
            },
        )
        if mode is not None:
            self._modes[(channel, message["ts"])] = mode
        self._keep_chunks(channel, message["ts"], params)
        return {"ok": True, "channel": channel, "ts": message["ts"]}

    def _append(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, message = self._streaming(params)
        mode, text = _text(params, required=True)
        self._keep_mode(channel, message["ts"], mode)
        self._keep_chunks(channel, message["ts"], params)
        message["text"] += text
        return {"ok": True, "channel": channel, "ts": message["ts"]}

    def _stop(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, message = self._streaming(params)
        mode, text = _text(params, required=False)
        self._keep_mode(channel, message["ts"], mode)
        self.session_status(channel, message.get("thread_ts"), params.get("session_status"))
        self._keep_chunks(channel, message["ts"], params)
        message["text"] += text
        if params.get("blocks"):
            message["blocks"] = _json(params["blocks"])
        if params.get("metadata"):
            message["metadata"] = _json(params["metadata"])
        message["streaming_state"] = "completed"
        rendered = self.store.render(channel, message)
        return {"ok": True, "channel": channel, "ts": message["ts"], "message": rendered}

    def _streaming(self, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        channel = _required(params, "channel", "channel_not_found")
        message = self.store.get(channel, _required(params, "ts", "message_not_found"))
        if message is None:
            raise SlackError("message_not_found")
        if message.get("bot_id") != self.bot_id:
            raise SlackError("message_not_owned_by_app")
        if message.get("streaming_state") != "in_progress":
            raise SlackError("message_not_in_streaming_state")
        return channel, message

    def _keep_chunks(self, channel: str, ts: str, params: dict[str, Any]) -> None:
        if params.get("chunks") is not None:
            self.timelines.setdefault((channel, ts), []).extend(_json(params["chunks"]))

    def _keep_mode(self, channel: str, ts: str, mode: str | None) -> None:
        if mode is None:
            return
        started = self._modes.setdefault((channel, ts), mode)
        if started != mode:
            raise SlackError("streaming_mode_mismatch")


def _text(params: dict[str, Any], required: bool) -> tuple[str | None, str]:
    """(how the text came: "markdown_text", "chunks" or None, the text)."""
    markdown = params.get("markdown_text")
    chunks = _json(params.get("chunks")) if params.get("chunks") is not None else None
    if markdown is not None and chunks is not None:
        raise SlackError("cannot_provide_both_markdown_text_and_chunks")
    mode: str | None
    if chunks is not None:
        text, mode = chunk_text(chunks), "chunks"
    else:
        text, mode = str(markdown or ""), "markdown_text" if markdown is not None else None
    if required and not text and chunks is None:  # task cards alone are an append too
        raise SlackError("markdown_text_or_chunks_required")
    if len(text) > MAX_MARKDOWN:
        raise SlackError("msg_too_long")
    return mode, text


def _required(params: dict[str, Any], name: str, error: str) -> str:
    value = params.get(name)
    if not value:
        raise SlackError(error)
    return str(value)


def _json(value: Any) -> Any:
    # Form-encoded requests carry blocks/metadata as JSON strings; JSON bodies as objects.
    if isinstance(value, str) and value.strip().startswith(("[", "{")):
        return json.loads(value)
    return value
