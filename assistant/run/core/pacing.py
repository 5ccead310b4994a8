"""How many stream calls Slack takes: per workspace and method, `chat.startStream` and
`chat.stopStream` are Tier 2 (20 a minute), `chat.appendStream` Tier 4 (100 a minute). Each
process keeps within them with a token bucket per method and workspace, and holds a method
back for as long as a 429's Retry-After says. The clock is given, so this is pure.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

Clock = Callable[[], float]

# (burst, per minute): the most any 60 seconds can see is burst + per minute, within the tier.
TIER_2 = (4.0, 16.0)
TIER_4 = (10.0, 90.0)


class TokenBucket:
    """`capacity` calls at once, refilled at `per_minute`."""

    def __init__(self, capacity: float, per_minute: float, clock: Clock = time.monotonic) -> None:
        self._capacity = capacity
        self._rate = per_minute / 60.0
        self._clock = clock
        self._tokens = capacity
        self._at = clock()
        self._held_until = 0.0

    def _refill(self) -> float:
        now = self._clock()
        self._tokens = min(self._capacity, self._tokens + (now - self._at) * self._rate)
        self._at = now
        return now

    def wait(self) -> float:
        """Seconds until a call may be made (0: now)."""
        now = self._refill()
        held = max(0.0, self._held_until - now)
        return max(held, (1.0 - self._tokens) / self._rate if self._tokens < 1.0 else 0.0)

    def take(self) -> bool:
        """Count a call if one may be made now."""
        if self.wait() > 0:
            return False
        self._tokens -= 1.0
        return True

    def hold(self, seconds: float) -> None:
        """Slack answered 429: no call before `seconds` from now."""
        self._held_until = max(self._held_until, self._refill() + seconds)


@dataclass
class WorkspacePacing:
    """The stream calls one workspace still takes."""

    starts: TokenBucket
    stops: TokenBucket
    appends: TokenBucket

    def take_start(self) -> bool:
        """A stream may start only if its stop will be let through too: both are counted."""
        if self.starts.wait() > 0 or self.stops.wait() > 0:
            return False
        return self.starts.take() and self.stops.take()


@dataclass
class StreamPacing:
    """Every workspace's pacing, for one process."""

    clock: Clock = time.monotonic
    _workspaces: dict[str, WorkspacePacing] = field(default_factory=dict)

    def of(self, team: str) -> WorkspacePacing:
        found = self._workspaces.get(team)
        if found is None:
            found = self._workspaces[team] = WorkspacePacing(
                TokenBucket(*TIER_2, self.clock),
                TokenBucket(*TIER_2, self.clock),
                TokenBucket(*TIER_4, self.clock),
            )
        return found
