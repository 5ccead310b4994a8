"""Scripted faults for `FakeSlack`, per Web API method: `ok: false` errors, 429 with
`Retry-After`, HTTP 5xx and dropped connections, taken in order by the next calls; and
outages, which fail every call to a method until they are ended. A 5xx or a dropped
connection may come after the call was carried out (`carried_out=True`), as when Slack's
answer is lost on the way back: the caller cannot know what Slack did."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

DROPPED = 0  # a fault's status for "the connection was closed, nothing was answered"


@dataclass
class Fault:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    carried_out: bool = False  # the call takes effect; only its answer is lost


class FaultScripting:
    """Part of `FakeSlack`: its router takes a call's fault with `_take_fault`."""

    _cond: threading.Condition

    def _init_faults(self) -> None:
        self._faults: dict[str, deque[Fault]] = {}
        self._outages: dict[str, Fault] = {}

    def fail(self, method: str, error: str, *, times: int = 1, **extra: Any) -> None:
        """The next `times` calls to `method` answer `{"ok": false, "error": error, **extra}`.

        `method="*"` applies to whichever method is called next.
        """
        self._add_fault(method, times, Fault(200, {"ok": False, "error": error, **extra}))

    def rate_limit(self, method: str, *, retry_after: int = 1, times: int = 1) -> None:
        """The next `times` calls get HTTP 429 with `Retry-After` (whole seconds, like Slack)."""
        fault = Fault(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(retry_after)})
        self._add_fault(method, times, fault)

    def server_error(
        self, method: str, *, status: int = 500, times: int = 1, carried_out: bool = False
    ) -> None:
        """The next `times` calls get an HTTP 5xx; `carried_out`: after taking effect (the
        call is recorded with the answer that was lost)."""
        body = {"ok": False, "error": "fatal_error"}
        self._add_fault(method, times, Fault(status, body, carried_out=carried_out))

    def disconnect(self, method: str, *, times: int = 1, carried_out: bool = False) -> None:
        """The next `times` calls get no answer: the connection is closed on them (recorded
        as calls with status 0); `carried_out`: after taking effect (recorded with the
        answer that was lost)."""
        self._add_fault(method, times, Fault(DROPPED, {}, carried_out=carried_out))

    def outage(
        self, method: str, *, status: int = 500, error: str = "fatal_error"
    ) -> Callable[[], None]:
        """Every call to `method` fails until the returned function is called: HTTP `status`
        (5xx as Slack answers them, 429 with `Retry-After: 1`, DROPPED: no answer), or with
        status 200 `{"ok": false, "error": error}`. Faults scripted by the other methods
        come first."""
        headers = {"Retry-After": "1"} if status == 429 else {}
        body = {} if status == DROPPED else {"ok": False, "error": error}
        with self._cond:
            self._outages[method] = Fault(status, body, headers)

        def end() -> None:
            with self._cond:
                self._outages.pop(method, None)

        return end

    def _add_fault(self, method: str, times: int, fault: Fault) -> None:
        with self._cond:
            self._faults.setdefault(method, deque()).extend([fault] * times)

    def _take_fault(self, method: str) -> Fault | None:
        for key in (method, "*"):
            queue = self._faults.get(key)
            if queue:
                return queue.popleft()
        return self._outages.get(method)
