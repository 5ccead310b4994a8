"""Whether the app has telemetry: built only when an OTLP endpoint is set."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assistant.telemetry.genai import capture_contents
from assistant.telemetry.setup import open_providers, wanted
from context.storage import Store

if TYPE_CHECKING:  # imported only when telemetry is on: it imports the SDK
    from assistant.telemetry.runs import Telemetry


def open_telemetry(agent_name: str, store: Store) -> Telemetry | None:
    """The app's `Telemetry` (assistant/telemetry/runs.py) when an OTLP endpoint is set; else
    None, and no OpenTelemetry module is imported. Raises TelemetryError."""
    if not wanted():
        return None
    from assistant.telemetry.runs import Telemetry

    return Telemetry(open_providers(), agent_name, store, capture_contents())
