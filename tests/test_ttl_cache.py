"""The expiring cache behind the link permission answers (time given by a test clock)."""

from __future__ import annotations

import pytest

from assistant.ttl_cache import TtlCache


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_a_value_is_kept_until_it_expires() -> None:
    clock = Clock()
    cache: TtlCache[str, bool] = TtlCache(60, 10, clock)
    cache.put("member", False)
    clock.now += 59.9
    assert cache.get("member") is False  # a stored False is an answer, not a miss
    clock.now += 0.1
    assert cache.get("member") is None
    assert len(cache) == 0  # an expired value is dropped when it is found expired


def test_putting_again_renews_the_value() -> None:
    clock = Clock()
    cache: TtlCache[str, int] = TtlCache(60, 10, clock)
    cache.put("a", 1)
    clock.now += 50
    cache.put("a", 2)
    clock.now += 50
    assert cache.get("a") == 2


def test_the_oldest_put_goes_first_when_full() -> None:
    cache: TtlCache[int, int] = TtlCache(60, 3, Clock())
    for n in range(3):
        cache.put(n, n)
    cache.put(0, 0)  # put again: now the newest
    cache.put(3, 3)
    assert [cache.get(n) for n in range(4)] == [0, None, 2, 3]
    assert len(cache) == 3


@pytest.mark.parametrize(("seconds", "size"), [(0, 10), (60, 0)])
def test_a_cache_that_could_hold_nothing_is_refused(seconds: float, size: int) -> None:
    with pytest.raises(ValueError, match="seconds > 0 and size >= 1"):
        TtlCache(seconds, size)
