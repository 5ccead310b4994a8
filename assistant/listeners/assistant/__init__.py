"""Slack's assistant panel, on Bolt's own assistant support (`AsyncAssistant`): the panel's
events and the messages people write in its threads."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from slack_bolt.async_app import AsyncApp, AsyncAssistant
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.payload_utils import is_other_message_sub_event_in_assistant_thread
from slack_bolt.response import BoltResponse

from assistant.listeners.assistant.context_changed import handle_thread_context_changed
from assistant.listeners.assistant.thread_started import handle_thread_started
from assistant.listeners.assistant.user_message import handle_user_message


class PanelAssistant(AsyncAssistant):
    """Bolt's assistant middleware, except that edits and deletions in a DM's threads go on to
    the app's own listeners (`listeners.events`), which record them: Bolt would acknowledge
    them here and drop them, and the log would miss them."""

    async def async_process(
        self,
        *,
        req: AsyncBoltRequest,
        resp: BoltResponse,
        next: Callable[[], Awaitable[BoltResponse]],
    ) -> BoltResponse | None:
        if is_other_message_sub_event_in_assistant_thread(req.body):
            return await next()  # no assistant listener takes these: nothing is skipped
        return await super().async_process(req=req, resp=resp, next=next)


def register(app: AsyncApp) -> None:
    assistant = PanelAssistant()
    assistant.thread_started(handle_thread_started)
    assistant.thread_context_changed(handle_thread_context_changed)
    assistant.user_message(handle_user_message)
    app.assistant(assistant)
