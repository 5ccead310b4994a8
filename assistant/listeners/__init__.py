"""Bolt listeners, one handler per file; `register` wires them all."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.events import EventRecorder
from assistant.listeners.events import register as register_events


def register(app: AsyncApp, events: EventRecorder) -> None:
    register_events(app, events)
