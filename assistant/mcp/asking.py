"""Who a server's question during a call is put to (MCP's elicitation): the person the run
answers. Apart from `connection.py` so that a run can name them without importing the SDK,
which imports OpenTelemetry (the app imports none of it without an endpoint)."""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable

import mcp_types as types

# A question the server asks during a call, put to the person the call is made for: given
# the server's name, the request, and the connection's redaction of a server's text; answers
# accept (with the form's content), decline or cancel.
Asking = Callable[
    [str, types.ElicitRequestParams, Callable[[str], str]], Awaitable[types.ElicitResult]
]
# Set by the caller around `Connection.call`: the SDK runs the elicitation callback with the
# calling task's context (in that task on 2026-07-28, a copy of its context on 2025-11-25), so
# this names who is asked. None: no one to ask (a replay, or a call outside a run): cancel.
current_asking: contextvars.ContextVar[Asking | None] = contextvars.ContextVar(
    "current_asking", default=None
)
