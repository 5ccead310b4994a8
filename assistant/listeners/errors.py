"""What Bolt does with an exception its listeners and middleware did not catch: Slack still
gets a 500 (an event is then sent again, so a message the store could not take is not lost),
and the console gets one line when the store could not be used just now (a connection cut, a
server restarting or read-only: `assistant.run.scheduling.scheduler.store_unavailable`) or a
workspace's token has expired while Slack does not refresh it (`TokenUnavailable`), a traceback
otherwise."""

from __future__ import annotations

import logging
from typing import Any

from assistant.run.core.store_errors import log_failure
from assistant.slack.workspaces import TokenUnavailable

log = logging.getLogger(__name__)


async def handle_error(error: Exception, body: dict[str, Any]) -> None:
    what = f"{_request(body)} not handled; Slack is answered 500"
    if isinstance(error, TokenUnavailable):  # Slack's own failure: no traceback to show
        log.warning("%s: %s", what, error)
    else:
        log_failure(error, what, log)


def _request(body: dict[str, Any]) -> str:
    """The request in a few words (its kind and event id, never its content)."""
    kind = body.get("type")
    if kind == "event_callback":
        event = body.get("event")
        inner = event.get("type") if isinstance(event, dict) else None
        return f"event {body.get('event_id')} ({inner})"
    return f"{kind} payload"
