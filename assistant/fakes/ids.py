"""Identifiers shared by the fake Slack server and the event builders.

They must agree: Bolt drops events whose `bot_id`/`user` matches what `auth.test` returned, and
the app keys threads by team and channel, so both sides take their defaults from here.
"""

from __future__ import annotations

import itertools
import threading

TEAM_ID = "T0FAKETEAM"
TEAM_NAME = "Fake Team"
TEAM_DOMAIN = "fake-team"
APP_ID = "A0FAKEAPP1"
BOT_USER_ID = "U0FAKEBOT1"
BOT_USER_NAME = "aya"
BOT_ID = "B0FAKEBOT1"
USER_ID = "U0FAKEUSR1"
CHANNEL_ID = "C0FAKECHN1"
DM_CHANNEL_ID = "D0FAKEDM01"

BOT_TOKEN = "xoxb-fake-bot-token"
APP_TOKEN = "xapp-1-fake-app-token"
SIGNING_SECRET = "fake-signing-secret"
OPENAI_API_KEY = "sk-test-not-a-real-key"

_BASE_SECONDS = 1_700_000_000


class TsClock:
    """Hands out Slack message timestamps: unique, increasing, "seconds.micros" strings.

    Each new ts is one second after the previous one, so timestamps derived from them (the
    log records whole seconds) stay distinct and ordered. `observe` moves the clock past a ts
    a test chose itself, so generated ones never collide with seeded ones.
    """

    def __init__(self, start: int = _BASE_SECONDS) -> None:
        self._lock = threading.Lock()
        self._seconds = start - 1
        self._micros = itertools.count(100, 100)

    def next(self) -> str:
        with self._lock:
            self._seconds += 1
            return f"{self._seconds}.{next(self._micros) % 1_000_000:06d}"

    def observe(self, ts: str) -> None:
        seconds = int(float(ts))
        with self._lock:
            self._seconds = max(self._seconds, seconds)


# One clock per process: seeded threads, events and the fake's own posts share one timeline.
clock = TsClock()


def next_ts() -> str:
    return clock.next()


_event_counter = itertools.count(1)
_event_lock = threading.Lock()


def next_event_id() -> str:
    with _event_lock:
        return f"Ev0FAKE{next(_event_counter):05d}"
