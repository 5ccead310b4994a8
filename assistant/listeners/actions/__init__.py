"""Interactivity: block actions (the feedback buttons, an approval's buttons, the Connect link
of a sign-in to an MCP server, a memory note's Undo, a routine proposal's Confirm and Cancel,
an MCP server's question's buttons) and the forms sent (the Deny button's, a question's)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.listeners.actions.approvals import handle_approval, handle_deny_reason
from assistant.listeners.actions.connect import handle_connect
from assistant.listeners.actions.feedback import handle_feedback
from assistant.listeners.actions.memory import handle_memory_undo
from assistant.listeners.actions.questions import handle_question, handle_question_form
from assistant.listeners.actions.routines import handle_routine_button
from assistant.run.approvals.entries import ACTION_IDS as APPROVAL
from assistant.run.approvals.entries import DENY_FORM
from assistant.run.approvals.sign_in import CONNECT
from assistant.run.progress.feedback_buttons import ACTION_ID as FEEDBACK
from assistant.run.tools.memory_notice import UNDO as MEMORY_UNDO
from assistant.run.tools.questions import ACTION_IDS as QUESTION
from assistant.run.tools.questions import FORM as QUESTION_FORM
from assistant.run.tools.schedule_routine import CANCEL as ROUTINE_CANCEL
from assistant.run.tools.schedule_routine import CONFIRM as ROUTINE_CONFIRM


def register(app: AsyncApp) -> None:
    app.action(FEEDBACK)(handle_feedback)
    for action_id in APPROVAL:
        app.action(action_id)(handle_approval)
    app.view(DENY_FORM)(handle_deny_reason)
    app.action(CONNECT)(handle_connect)
    app.action(MEMORY_UNDO)(handle_memory_undo)
    app.action(ROUTINE_CONFIRM)(handle_routine_button)
    app.action(ROUTINE_CANCEL)(handle_routine_button)
    for action_id in QUESTION:
        app.action(action_id)(handle_question)
    app.view(QUESTION_FORM)(handle_question_form)
