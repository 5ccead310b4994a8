"""A streamed run's task cards (assistant/run/progress/step_cards.py): a stream of their own,
recorded in the store before Slack is asked, updated as the steps change, stopped as they are or
with the answer's text below them; a refused start turns the cards off without failing the run,
and a start whose answer may have been lost stays recorded for the next run to settle. On a real
store (SQLite and PostgreSQL) and the fake Slack over HTTP."""

from __future__ import annotations

from assistant.fakes import FakeSlack
from assistant.run.core.leftovers import start_marker
from assistant.run.core.pacing import StreamPacing
from assistant.run.core.run_context import RunContext
from assistant.run.progress.step_cards import STEPS_METADATA, StepCards
from context.storage import OpenStream
from context.toolcalls import GetThreadHistory
from tests.run.conftest import ASKER, KEY, TS

ANSWER_METADATA = {"event_type": "assistant_answer", "event_payload": {"index": 4}}


def cards_of(ctx: RunContext) -> StepCards:
    assert ctx.client is not None
    return StepCards(ctx, ctx.client, StreamPacing().of(KEY.team), ASKER, first=1)


def statuses(slack: FakeSlack, ts: str) -> list[str]:
    return [chunk["status"] for chunk in slack.streams.timelines[(KEY.channel, ts)]]


async def test_a_step_is_a_card_updated_then_stopped_as_it_stands(ctx, slack, store) -> None:
    cards = cards_of(ctx)
    await cards.note(ctx.log.append(GetThreadHistory(), TS))
    ts = cards.ts
    assert ts is not None
    assert store.open_streams(KEY) == [OpenStream(ts)]  # a crash leaves it to the next run
    await cards.note(ctx.log.append("(the thread's history)", TS))  # its result
    assert statuses(slack, ts) == ["in_progress", "complete"]

    await cards.close()

    stop = slack.calls_to("chat.stopStream")[-1].params
    assert stop["ts"] == ts and stop["metadata"] == STEPS_METADATA  # never taken for a post
    assert slack.store.get(KEY.channel, ts)["streaming_state"] == "completed"
    assert store.open_streams(KEY) == [] and cards.ts is None


async def test_the_answer_finishes_the_cards_stream_below_them(ctx, slack, store) -> None:
    cards = cards_of(ctx)
    await cards.note(ctx.log.append(GetThreadHistory(), TS), ctx.log.append("(history)", TS))
    ts = cards.ts

    assert await cards.finish_with("It was the deploy.", ANSWER_METADATA, []) == ts

    message = slack.store.get(KEY.channel, ts)
    assert message["text"] == "It was the deploy."
    assert message["streaming_state"] == "completed"
    assert slack.calls_to("chat.stopStream")[-1].params["metadata"] == ANSWER_METADATA
    assert store.open_streams(KEY) == []
    assert await cards.finish_with("again", ANSWER_METADATA, []) is None  # none open now


async def test_a_refused_start_turns_the_cards_off_and_leaves_nothing(ctx, slack, store) -> None:
    cards = cards_of(ctx)
    slack.fail("chat.startStream", "not_authorized")
    await cards.note(ctx.log.append(GetThreadHistory(), TS))  # no exception: the run goes on
    assert cards.ts is None and store.open_streams(KEY) == []
    await cards.note(ctx.log.append("(history)", TS))
    assert len(slack.calls_to("chat.startStream")) == 1  # no more cards in this run


async def test_a_start_whose_answer_may_be_lost_stays_recorded(ctx, slack, store) -> None:
    cards = cards_of(ctx)
    slack.server_error("chat.startStream", status=503)
    await cards.note(ctx.log.append(GetThreadHistory(), TS))
    assert cards.ts is None
    # Slack may have made the message: the next run or a sweep finds it after this ts.
    assert store.open_streams(KEY) == [OpenStream(start_marker(ctx), "starting")]
