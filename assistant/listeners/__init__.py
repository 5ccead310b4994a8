"""Bolt listeners, one handler per file; `register` wires them all."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.intake.approvals import ApprovalButtons
from assistant.intake.events import EventRecorder
from assistant.intake.stops import StopButton
from assistant.listeners.actions import register as register_actions
from assistant.listeners.assistant import register as register_assistant
from assistant.listeners.errors import register as register_errors
from assistant.listeners.events import (
    agent_session_stopped,
    agent_session_title_changed,
    app_home_opened,
    uninstalls,
)
from assistant.listeners.events import register as register_events
from assistant.listeners.home import register as register_home
from assistant.listeners.shortcuts import register as register_shortcuts
from assistant.panel.events import Panel
from assistant.panel.feedback import Feedback
from assistant.panel.home import AppHome
from assistant.panel.messages_tab import MessagesTab
from assistant.panel.session_titles import SessionTitles


def register(
    app: AsyncApp,
    events: EventRecorder,
    panel: Panel,
    feedback: Feedback,
    home: AppHome,
    stops: StopButton,
    approvals: ApprovalButtons,
    oauth: bool = False,
) -> None:
    """`oauth`: installed to many workspaces through OAuth (their installations are kept)."""
    register_assistant(app, events, panel)  # a middleware: it sees DM threads' messages first
    register_events(app, events)
    tab = MessagesTab(panel.settings, panel.recorder, panel.languages, panel.prompts)
    app_home_opened.register(app, tab)
    agent_session_stopped.register(app, stops)
    agent_session_title_changed.register(app, SessionTitles(panel.recorder))
    uninstalls.register(app, oauth)
    register_actions(app, feedback, approvals)
    register_shortcuts(app, events)
    register_home(app, home)
    register_errors(app)
