"""What a run does when Slack fails it (assistant/run/core/slack_outage.py): defer with
backoff within the bound, or end; and the timers that try deferred threads again
(assistant/run/core/deferral.py). In process, on a real store (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError

from assistant.run.core.deferral import RESTARTED, SLACK_BACK, Retries, RunDeferred
from assistant.run.core.recorder import Recorder
from assistant.run.core.slack_outage import MAX_RETRY_SECONDS, SlackOutages, duration
from context.entry import UserContent
from context.storage import EntryMeta, Store, ThreadKey
from context.trace import NoTrace
from tests.slack_errors import slack_error

KEY = ThreadKey("T1", "C1", "1712233980.000100")
REASON = "Slack failed: service_unavailable (from chat.postMessage)"


def waited(store: Store, seconds: float, exc: BaseException) -> float | str:
    """What `SlackOutages.wait` does: the deferral's delay, or the reason the run ends."""

    async def wait() -> float | str:
        try:
            return await SlackOutages(store, seconds).wait(
                KEY, exc, REASON, Recorder(store, NoTrace())
            )
        except RunDeferred as deferred:
            return deferred.retry_in

    return asyncio.run(wait())


@pytest.fixture
def thread(store: Store) -> Store:
    store.append(KEY, "persona", "2025-04-04T12:33:00Z")
    return store


def test_a_failure_that_may_pass_defers_the_run_and_says_so_once(thread: Store) -> None:
    assert waited(thread, 600, slack_error(503, "service_unavailable")) == 1.0
    assert thread.deferred_since(KEY) is not None
    assert waited(thread, 600, aiohttp.ServerDisconnectedError()) >= 1.0
    said = [e.content for e in thread.entries(KEY)][1:]  # after the persona
    assert len(said) == 1 and str(said[0]).startswith(f"{REASON}. The run stopped;")


def test_a_429_waits_as_long_as_it_asks_within_the_bounds(thread: Store) -> None:
    assert waited(thread, 600, slack_error(429, "ratelimited", {"Retry-After": "30"})) == 30.0
    thread.defer(KEY, datetime.now(UTC), datetime.now(UTC))  # a fresh deferral again
    asks_long = slack_error(429, "ratelimited", {"Retry-After": "600"})
    assert waited(thread, 600, asks_long) == MAX_RETRY_SECONDS


def test_a_garbled_retry_after_is_the_first_backoff(thread: Store) -> None:
    garbled = slack_error(429, "ratelimited", {"Retry-After": "inf"})
    assert waited(thread, 600, garbled) == 1.0


def test_the_backoff_grows_with_the_wait_so_far(thread: Store) -> None:
    since = datetime.now(UTC) - timedelta(seconds=20)
    thread.defer(KEY, since, since)
    delay = waited(thread, 600, slack_error(500, "internal_error"))
    assert isinstance(delay, float) and 20 <= delay <= MAX_RETRY_SECONDS


def test_the_last_try_comes_when_the_bound_ends(thread: Store) -> None:
    since = datetime.now(UTC) - timedelta(seconds=50)
    thread.defer(KEY, since, since)
    delay = waited(thread, 60, slack_error(500, "internal_error"))
    assert isinstance(delay, float) and delay <= 10


def test_past_the_bound_the_run_ends(thread: Store) -> None:
    since = datetime.now(UTC) - timedelta(minutes=11)
    thread.defer(KEY, since, since)
    assert waited(thread, 600, slack_error(500, "internal_error")) == (
        f"{REASON}, still after 11 min of tries"
    )


@pytest.mark.parametrize(
    "exc", [slack_error(404, "channel_not_found"), slack_error(200, "invalid_auth")]
)
def test_a_failure_that_will_not_pass_ends_the_run_at_once(
    thread: Store, exc: SlackApiError
) -> None:
    assert waited(thread, 600, exc) == REASON
    assert thread.deferred_since(KEY) is None
    assert [e.role for e in thread.entries(KEY)] == ["system"]  # the persona alone


def test_a_resumed_run_says_why_it_finds_work_left(thread: Store) -> None:
    outages = SlackOutages(thread, 600)
    assert asyncio.run(outages.resumed(KEY)) == RESTARTED
    thread.defer(KEY, datetime.now(UTC), datetime.now(UTC))
    assert asyncio.run(outages.resumed(KEY)) == SLACK_BACK


@pytest.mark.parametrize(
    ("seconds", "said"), [(0.4, "0 s"), (119, "119 s"), (120, "2 min"), (3600, "60 min")]
)
def test_durations_read_as_people_say_them(seconds: float, said: str) -> None:
    assert duration(seconds) == said


def test_a_thread_is_tried_again_once_by_its_latest_timer() -> None:
    async def tried() -> tuple[list[ThreadKey], list[dict[str, Any]]]:
        loop = asyncio.get_running_loop()
        errors: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _, context: errors.append(context))
        retries, calls = Retries(), []
        retries.call(0, calls.append, KEY)
        retries.call(0, calls.append, KEY)  # the later deferral replaces the earlier timer
        retries.call(0, calls.append, ThreadKey("T1", "C1", "other"))
        await passed(loop)
        retries.call(0, calls.append, ThreadKey("T1", "C1", "stopped"))
        retries.cancel()  # at stop: none runs
        await passed(loop)
        return calls, errors

    assert asyncio.run(tried()) == ([KEY, ThreadKey("T1", "C1", "other")], [])


async def passed(loop: asyncio.AbstractEventLoop) -> None:
    """Until the timers due now have run: a timer due no sooner has."""
    ran = asyncio.Event()
    loop.call_later(0, ran.set)
    await asyncio.wait_for(ran.wait(), timeout=30)


def test_a_wait_for_approval_is_no_outage(thread: Store) -> None:
    """A run waiting for a person (assistant/run/approvals/entries.py) is due at its expiry
    only, and a Slack outage after it gets its own bound."""
    later = datetime.now(UTC) + timedelta(minutes=15)
    thread.append(
        KEY,
        UserContent(userid="<@U1>", text="cancel A1"),
        "2025-04-04T12:34:00Z",
        EntryMeta(slack_ts="1712233981.000100", wants_answer=True),
    )
    thread.defer(KEY, None, later)
    assert thread.deferred_since(KEY) is None
    assert KEY not in thread.waiting_threads()  # not due before the expiry
    thread.defer(KEY, None, datetime.now(UTC))  # a click: due now
    assert KEY in thread.waiting_threads()
    assert waited(thread, 600, slack_error(503, "service_unavailable")) == 1.0
