"""Interactivity: message shortcuts ("Ask Aya about this")."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.listeners.shortcuts.ask_about_this import CALLBACK_ID, handle_ask_about_this


def register(app: AsyncApp) -> None:
    app.shortcut(CALLBACK_ID)(handle_ask_about_this)
