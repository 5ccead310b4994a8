"""The App Home: the home tab opened, its Edit, page and grants' Revoke buttons, the settings
modal submitted (`assistant.panel.home`), a person's Disconnect from an MCP server, and a
channel memory's Edit and Delete buttons and its modal."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.listeners.home.disconnect import handle_disconnect
from assistant.listeners.home.edit import handle_edit
from assistant.listeners.home.memory import (
    handle_memory_delete,
    handle_memory_edit,
    handle_memory_submitted,
)
from assistant.listeners.home.page import handle_page
from assistant.listeners.home.revoke import handle_revoke_grant
from assistant.listeners.home.settings_submitted import handle_settings_submitted
from assistant.listeners.home.tab_opened import handle_home_tab_opened, on_home_tab
from assistant.panel.home_connections import DISCONNECT_ACTION
from assistant.panel.home_memory import MEMORY_DELETE_ACTION, MEMORY_EDIT_ACTION, MEMORY_MODAL
from assistant.panel.home_views import EDIT_ACTION, MODAL, PAGE_ACTION, REVOKE_ACTION


def register(app: AsyncApp) -> None:
    app.event("app_home_opened", matchers=[on_home_tab])(handle_home_tab_opened)
    app.action(EDIT_ACTION)(handle_edit)
    app.action(PAGE_ACTION)(handle_page)
    app.action(REVOKE_ACTION)(handle_revoke_grant)
    app.action(DISCONNECT_ACTION)(handle_disconnect)
    app.view(MODAL)(handle_settings_submitted)
    app.action(MEMORY_EDIT_ACTION)(handle_memory_edit)
    app.action(MEMORY_DELETE_ACTION)(handle_memory_delete)
    app.view(MEMORY_MODAL)(handle_memory_submitted)
