"""Bolt listeners: each handler a named module-level function in a module of its own,
registered here, in one `register` per kind (events, the assistant panel, block actions,
shortcuts, the App Home, errors). A handler asks for the parts it acts through by name
(`assistant.listeners.parts`)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.listeners import actions, events, home, shortcuts
from assistant.listeners import assistant as panel_thread
from assistant.listeners.errors import handle_error
from assistant.listeners.parts import Parts, ProvideParts


def register(app: AsyncApp, parts: Parts) -> None:
    app.use(ProvideParts(parts))  # first: every listener below finds the parts
    panel_thread.register(app)  # a middleware: it sees DM threads' messages first
    events.register(app)
    actions.register(app)
    shortcuts.register(app)
    home.register(app)
    app.error(handle_error)
