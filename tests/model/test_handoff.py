"""Handing a streamed answer's events from the model client's loop to the run's
(assistant/model/handoff.py): in order, the first at once, urgent ones with all gathered before
them, and the sender's error raised after the last item."""

from __future__ import annotations

import asyncio

import pytest

from assistant.model.handoff import Handoff


async def test_items_arrive_in_order_and_the_error_after_them():
    handoff: Handoff[int] = Handoff(asyncio.get_running_loop(), pause=3600)
    items = handoff.receive()
    handoff.send([1, 2])  # the first: at once
    handoff.send([3])  # gathered (for an hour here)
    handoff.send([4], urgent=True)  # goes at once, with what was gathered
    assert [await anext(items) for _ in range(4)] == [1, 2, 3, 4]
    handoff.send([5])
    handoff.close(ValueError("the stream broke"))  # what was gathered first, then the error
    assert await anext(items) == 5
    with pytest.raises(ValueError, match="the stream broke"):
        await anext(items)


async def test_gathered_items_go_once_the_pause_is_over():
    handoff: Handoff[str] = Handoff(asyncio.get_running_loop(), pause=0.01)
    handoff.send(["first"])
    handoff.send(["second"])
    items = handoff.receive()
    assert [await anext(items), await anext(items)] == ["first", "second"]
    handoff.close()
    assert [item async for item in items] == []
