"""Keeping within Slack's rate tiers (assistant/run/core/pacing.py), on a clock the test
moves."""

from __future__ import annotations

from assistant.run.core.pacing import TIER_2, TIER_4, StreamPacing, TokenBucket


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_lets_a_burst_through_then_its_rate():
    clock = Clock()
    bucket = TokenBucket(3, 60, clock)  # one a second after three at once
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    assert bucket.wait() == 1.0
    clock.now += 1.0
    assert bucket.take() and not bucket.take()


def test_a_429_holds_the_method_back_for_its_retry_after():
    clock = Clock()
    bucket = TokenBucket(10, 600, clock)
    bucket.hold(30)
    assert not bucket.take()
    assert bucket.wait() == 30
    clock.now += 30
    assert bucket.take()


def test_no_60_seconds_see_more_calls_than_the_tier():
    for (burst, per_minute), tier in ((TIER_2, 20), (TIER_4, 100)):
        clock = Clock()
        bucket = TokenBucket(burst, per_minute, clock)
        taken = []
        for _ in range(600):  # ten minutes, asking ten times a second
            if bucket.take():
                taken.append(clock.now)
            clock.now += 0.1
        for at in taken:
            assert sum(at <= t < at + 60 for t in taken) <= tier


def test_a_stream_starts_only_when_its_stop_is_sure_to_pass_too():
    clock = Clock()
    pacing = StreamPacing(clock).of("T1")
    starts = 0
    while pacing.take_start():
        starts += 1
    assert starts == TIER_2[0]
    assert not pacing.stops.take()  # every stop was reserved by its start
    assert StreamPacing(clock).of("T2").take_start()  # another workspace has its own
