"""A question an MCP server asks during a call, put to the person the run answers
(docs/slack-features.md#questions-from-tools): the run, still in the call and keeping its
lease, records the question, posts it in the thread, and waits for the answer in the store
(given from the form in any process: assistant/intake/questions.py), for a stop, or for
ASSISTANT_MCP_ELICITATION_SECONDS; then records the answer and gives it to the server."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types

from assistant.run.core.lease import current_lease, ensure_lease
from assistant.run.tools.questions import (
    Action,
    Question,
    answer_text,
    answered_blocks,
    asked_text,
    message_blocks,
    question_of,
    refused_text,
)
from assistant.slack.connection import SLACK_FAILURES, slack_reason
from context.storage import Elicitation
from context.storage.async_store import async_store

if TYPE_CHECKING:
    from assistant.run.core.run_context import RunContext

log = logging.getLogger(__name__)

# How often the waiting call reads the store for the answer (and for a stop): the form's
# submission may reach another process than this run's.
CHECK_SECONDS = 0.25
_ENDING: set[asyncio.Task[None]] = set()  # questions of stopped calls being marked cancelled


@dataclass(frozen=True)
class PersonAsking:
    """`assistant.mcp.asking.Asking` for one call of a run: `index` is the call's entry."""

    ctx: RunContext
    tool: str  # the server's name of the tool called
    index: int
    seconds: float  # ASSISTANT_MCP_ELICITATION_SECONDS

    async def __call__(
        self, server: str, params: types.ElicitRequestParams, plain: Callable[[str], str]
    ) -> types.ElicitResult:
        ctx = self.ctx
        recorder, client, asker = ctx.recorder, ctx.client, ctx.asker
        if recorder is None or client is None or asker is None:
            return types.ElicitResult(action="cancel")  # no one to ask: a replay
        data = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        question = question_of(server, self.tool, data, plain)
        if isinstance(question, str):
            ensure_lease()
            await recorder.record(ctx.key, refused_text(server, self.tool, self.index, question))
            return types.ElicitResult(action="cancel")
        store = ctx.store
        asked = await async_store(store).write(store.ask_person, ctx.key, asker, question.to_json())
        ensure_lease()
        await recorder.record(ctx.key, asked_text(question, self.index, asker))
        text, blocks = message_blocks(question, asked.id, asker, ctx.words)
        ts: str | None = None
        try:
            posted = await client.chat_postMessage(
                channel=ctx.key.channel,
                thread_ts=ctx.key.thread_ts or None,
                text=text,
                blocks=blocks,
            )
            ts = posted.get("ts")
        except SLACK_FAILURES as exc:
            log.warning("could not ask %s in %s: %s", asker, ctx.key, slack_reason(exc))
            answered, why = await self._cancel(asked, ""), "the question could not be posted"
        else:
            try:
                answered, why = await self._answer(asked)
            except asyncio.CancelledError:
                # The run stopped (the stop button) or the call's deadline passed: the
                # question no longer waits, and its buttons say so to a late click.
                _in_background(self._cancelled(asked, question, ts, text))
                raise
        action: Action = "cancel"
        if answered.action in ("accept", "decline"):
            action = "accept" if answered.action == "accept" else "decline"
        content = _content(answered.content_json) if action == "accept" else None
        lease = current_lease.get()
        if lease is not None and lease.stop is not None:
            # The run is stopped: the stop's entries say what became of the call; the server
            # is answered cancel.
            _in_background(self._cancelled(asked, question, ts, text))
            return types.ElicitResult(action="cancel")
        ensure_lease()
        await recorder.record(
            ctx.key, answer_text(self.index, action, answered.answered_by, content, why)
        )
        await self._show(question, ts, text, action, answered.answered_by)
        if action == "accept" and question.mode == "form":
            return types.ElicitResult(action="accept", content=dict(content or {}))
        return types.ElicitResult(action=action)

    async def _answer(self, asked: Elicitation) -> tuple[Elicitation, str]:
        """The question answered: by the person, or cancelled (a stop, or no answer in time),
        with why it was cancelled."""
        store, key = self.ctx.store, self.ctx.key
        end = time.monotonic() + self.seconds
        while True:
            row = await async_store(store).read(store.elicitation, key.team, asked.id)
            if row is not None and row.action is not None:
                return row, ""
            # The stop as the run's scheduler saw it (it watches the store, and cancels the
            # run; the lease is shared with the SDK's task a 2025-11-25 question is asked
            # in): one way a stop ends a run. Outside a scheduler, as the store has it.
            lease = current_lease.get()
            if lease is not None:
                stop = lease.stop
            else:
                stop = await async_store(store).read(store.stop_requested, key)
            if stop is not None:
                return await self._cancel(asked, stop.user), f"<@{stop.user}> pressed stop"
            if time.monotonic() >= end:
                why = f"no answer within {self.seconds:g} s (ASSISTANT_MCP_ELICITATION_SECONDS)"
                return await self._cancel(asked, ""), why
            await asyncio.sleep(CHECK_SECONDS)

    async def _cancel(self, asked: Elicitation, by: str) -> Elicitation:
        """Cancelled, unless an answer came first (then that answer)."""
        store, team = self.ctx.store, self.ctx.key.team
        row = await async_store(store).write(
            store.answer_elicitation, team, asked.id, "cancel", None, by
        )
        if row is None:
            row = await async_store(store).read(store.elicitation, team, asked.id)
        return row or asked

    async def _cancelled(
        self, asked: Elicitation, question: Question, ts: str | None, text: str
    ) -> None:
        try:
            await self._cancel(asked, "")
            await self._show(question, ts, text, "cancel", None, checked=False)
        except Exception as exc:  # a courtesy: the stop's entries say what happened
            log.info("could not mark the question in %s cancelled: %s", self.ctx.key, exc)

    async def _show(
        self,
        question: Question,
        ts: str | None,
        text: str,
        action: Action,
        by: str | None,
        checked: bool = True,
    ) -> None:
        """The question's message says how it was answered; its buttons go (a courtesy: the
        log has it)."""
        words = self.ctx.words
        if action == "accept":
            said = words.gettext("Answered by <@{who}>.", who=by)
        elif action == "decline":
            said = words.gettext("Declined by <@{who}>.", who=by)
        else:
            said = words.gettext("Cancelled.")
        shown = f"{text}\n{said}"
        if self.ctx.client is None or ts is None:
            return
        try:
            if checked:  # a run being stopped no longer holds its lease, and says so
                ensure_lease()
            await self.ctx.client.chat_update(
                channel=self.ctx.key.channel, ts=ts, text=shown, blocks=answered_blocks(shown)
            )
        except SLACK_FAILURES as exc:
            log.info(
                "could not mark the question in %s answered: %s", self.ctx.key, slack_reason(exc)
            )


def _in_background(work: Coroutine[Any, Any, None]) -> None:
    """`work` in a task of its own: a stopped call's awaits raise again (the SDK's cancel
    scope), so what is left to say of its question is said there."""
    task = asyncio.create_task(work)
    _ENDING.add(task)
    task.add_done_callback(_ENDING.discard)


def _content(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    value = json.loads(text)
    return value if isinstance(value, dict) else None
