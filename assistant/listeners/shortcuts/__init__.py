"""Interactivity: message shortcuts ("Ask Aya about this")."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.intake.events import EventRecorder
from assistant.listeners.shortcuts import ask_about_this


def register(app: AsyncApp, events: EventRecorder) -> None:
    ask_about_this.register(app, events)
