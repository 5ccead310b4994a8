"""Slack's assistant view (`assistant_view`, the split-view panel) is deprecated by Slack's
changelog of 2026-08-20 and removed in February 2027; the agent view (`agent_view`) replaces
it (docs/slack-setup.md, "Moving from the assistant view"). Until then the panel's events keep
working, and the process says once, with one warning, that it is on the legacy view: when the
manifest it ships with declares `assistant_view` (checked at start), or when Slack sends it a
panel event (`assistant_thread_started`, `assistant_thread_context_changed`).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import yaml

log = logging.getLogger(__name__)

LEGACY_FEATURE = "assistant_view"
WARNING = (
    "this app uses Slack's legacy assistant view (%s), which Slack removes in February 2027; "
    "after that the panel's events stop and its threads show nothing: declare agent_view "
    "instead (docs/slack-setup.md, 'Moving from the assistant view')"
)

_warned = threading.Event()  # once per process, whatever shows it first


def warn_once(what: str) -> None:
    """One warning per process that the app is on the legacy view, `what` saying how it shows."""
    if _warned.is_set():
        return
    _warned.set()
    log.warning(WARNING, what)


def manifest_declares_legacy(manifest: Path) -> bool:
    """Whether the manifest's features declare the assistant view; a manifest that cannot be
    read declares nothing (the OAuth flow reads it and says what is wrong)."""
    try:
        data: Any = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return False
    features = data.get("features") if isinstance(data, dict) else None
    return isinstance(features, dict) and LEGACY_FEATURE in features


def check_manifest(manifest: Path) -> None:
    """At start: warn once if the manifest declares the legacy view."""
    if manifest_declares_legacy(manifest):
        warn_once(f"'{LEGACY_FEATURE}' in {manifest.name}'s features")
