"""Every Slack listener is a named module-level function of `assistant.listeners`, as Slack's
samples write them: a newcomer, a profiler or a drawing of the code finds each by its name.
Read off the Bolt app `serve` builds, so a closure registered anywhere is found."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from slack_bolt.async_app import AsyncAssistant

pytestmark = pytest.mark.listeners

PANEL_LISTS = ("_thread_started_listeners", "_thread_context_changed_listeners")
PANEL_LISTS += ("_user_message_listeners", "_bot_message_listeners")


def handlers(bolt: Any) -> list[Callable[..., Any]]:
    found = [listener.ack_function for listener in bolt._async_listeners]
    for middleware in bolt._async_middleware_list:
        if isinstance(middleware, AsyncAssistant):
            for name in PANEL_LISTS:
                found += [listener.ack_function for listener in getattr(middleware, name) or []]
    return found


def test_every_listener_is_a_named_module_level_function(app):
    found = handlers(app.assistant.app)
    names = {f"{handler.__module__}.{handler.__qualname__}" for handler in found}
    assert len(found) >= 20  # every kind: events, the panel, actions, shortcuts, the App Home
    for handler in found:
        assert handler.__module__.startswith("assistant.listeners."), handler
        assert "<locals>" not in handler.__qualname__, handler
        assert handler.__name__.startswith("handle_"), handler
    assert "assistant.listeners.events.app_mention.handle_app_mention" in names
    assert "assistant.listeners.assistant.user_message.handle_user_message" in names
