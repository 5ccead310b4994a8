"""Events API listeners."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.listeners.events.agent_session_stopped import handle_agent_session_stopped
from assistant.listeners.events.agent_session_title_changed import (
    handle_agent_session_title_changed,
)
from assistant.listeners.events.app_context_changed import handle_app_context_changed
from assistant.listeners.events.app_home_opened import handle_messages_tab_opened, on_messages_tab
from assistant.listeners.events.app_mention import handle_app_mention
from assistant.listeners.events.message import PERSON_SUBTYPES, handle_message
from assistant.listeners.events.message_changed import handle_message_changed
from assistant.listeners.events.message_deleted import handle_message_deleted
from assistant.listeners.events.other_messages import handle_other_message
from assistant.listeners.events.uninstalls import handle_app_uninstalled, handle_tokens_revoked


def register(app: AsyncApp) -> None:
    # Order matters: Bolt runs the first listener that matches, the catch-all goes last.
    app.event("app_mention")(handle_app_mention)
    app.event("app_context_changed")(handle_app_context_changed)
    app.event({"type": "message", "subtype": PERSON_SUBTYPES})(handle_message)
    app.event({"type": "message", "subtype": "message_changed"})(handle_message_changed)
    app.event({"type": "message", "subtype": "message_deleted"})(handle_message_deleted)
    app.event("message")(handle_other_message)
    app.event("app_home_opened", matchers=[on_messages_tab])(handle_messages_tab_opened)
    app.event("agent_session_stopped")(handle_agent_session_stopped)
    app.event("agent_session_title_changed")(handle_agent_session_title_changed)
    app.event("app_uninstalled")(handle_app_uninstalled)
    app.event("tokens_revoked")(handle_tokens_revoked)
