"""What the listeners act through, handed to each by name.

Bolt gives a listener every key of the request's context that none of its own arguments
(`body`, `event`, `ack`, `client`…) already names (`slack_bolt.kwargs_injection`). The one
middleware below puts each part into the context, so every handler is a plain module-level
function that names the parts it uses: `async def handle_app_mention(…, events:
EventRecorder)`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, fields

from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from assistant.intake.approvals import ApprovalButtons
from assistant.intake.events import EventRecorder
from assistant.intake.memory_undo import MemoryUndo
from assistant.intake.questions import QuestionButtons
from assistant.intake.routine_buttons import RoutineButtons
from assistant.intake.stops import StopButton
from assistant.listeners.events.uninstalls import Uninstalls
from assistant.panel.events import Panel
from assistant.panel.feedback import Feedback
from assistant.panel.home import AppHome
from assistant.panel.messages_tab import MessagesTab
from assistant.panel.session_titles import SessionTitles


@dataclass(frozen=True)
class Parts:
    """Each field's name is the argument name a handler asks for it by."""

    events: EventRecorder
    panel: Panel
    feedback: Feedback
    home: AppHome
    stops: StopButton
    approvals: ApprovalButtons
    questions: QuestionButtons
    messages_tab: MessagesTab
    session_titles: SessionTitles
    uninstalls: Uninstalls
    memory_undo: MemoryUndo
    routine_buttons: RoutineButtons


class ProvideParts(AsyncMiddleware):
    """The first of the app's own middleware: every listener after it finds the parts."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    async def async_process(
        self,
        *,
        req: AsyncBoltRequest,
        resp: BoltResponse,
        next: Callable[[], Awaitable[BoltResponse]],
    ) -> BoltResponse | None:
        for field in fields(self.parts):
            req.context[field.name] = getattr(self.parts, field.name)
        return await next()
