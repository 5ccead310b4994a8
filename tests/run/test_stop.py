"""The stop button's end of a run (assistant/run/stopping/stop.py): what Slack stopped stays,
what the run left streaming is stopped as it is, a stream Slack would not stop stays owed, and
one `Stopped:` entry says who, when and what had been shown, covering the request. On a real
store (SQLite and PostgreSQL) and the fake Slack over HTTP."""

from __future__ import annotations

import io

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from assistant.fakes import FakeSlack, ids
from assistant.run.core.recorder import Recorder
from assistant.run.core.run_context import RunContext
from assistant.run.stopping.stop import StopRecorder, stop_entry
from context.entry import STOP_PREFIX
from context.storage import OpenStream, StopRequest, Store
from context.trace import TraceWriter
from tests.run.conftest import ASKER, KEY

PRESSED_AT = "1712234000.000000"  # 2024-04-04 12:33:20 UTC


@pytest.fixture
def thread(ctx: RunContext) -> Store:
    """The store, with the thread's question owed an answer (and in Slack)."""
    return ctx.store


def client_of(slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)


async def streaming(client: AsyncWebClient, text: str) -> str:
    """A message of the run's, streaming in the thread; its ts."""
    started = await client.chat_startStream(
        channel=KEY.channel, thread_ts=KEY.thread_ts, markdown_text=text,
        recipient_user_id=ASKER, recipient_team_id=KEY.team,
    )  # fmt: skip
    return str(started["ts"])


def stop_of(*streams: str, user: str = "U0PRESSER") -> StopRequest:
    return StopRequest(user=user, at=PRESSED_AT, streams=streams, through=1)


def last_entry(store: Store) -> str:
    content = store.entries(KEY)[-1].content
    assert isinstance(content, str)
    return content


async def test_the_streams_stay_as_shown_and_the_entry_quotes_them(thread, slack) -> None:
    client = client_of(slack)
    stopped_by_slack = await streaming(client, "Half an ans")
    await client.chat_stopStream(channel=KEY.channel, ts=stopped_by_slack)  # Slack's stop
    left_open = await streaming(client, "Cards")
    thread.change_open_streams(KEY, [OpenStream(stopped_by_slack), OpenStream(left_open)])
    trace = io.StringIO()
    recorder = StopRecorder(Recorder(thread, TraceWriter(trace, colour=False)), client)

    await recorder(KEY, stop_of(stopped_by_slack), [(stopped_by_slack, "Half an ans")])

    # The stream the run left open is stopped as it stands, not deleted.
    assert [c.params["ts"] for c in slack.calls_to("chat.stopStream")][-1] == left_open
    assert slack.store.get(KEY.channel, left_open)["streaming_state"] == "completed"
    assert slack.calls_to("chat.delete") == []
    assert thread.open_streams(KEY) == []
    assert last_entry(thread) == (
        f"{STOP_PREFIX}<@U0PRESSER> pressed stop at 2024-04-04 12:33:20 UTC (not <@U0ASKER>, "
        "who asked); the answer stopped there, and the request counts as answered. "
        'What it had streamed stays in the thread: "Half an ans".'
    )
    assert thread.pending(KEY) == []  # answered: no apology, no run owed
    assert "pressed stop" in trace.getvalue()  # recorded through the recorder: traced once


async def test_a_stream_slack_will_not_stop_stays_owed(thread, slack) -> None:
    client = client_of(slack)
    left_open = await streaming(client, "Cards")
    thread.change_open_streams(KEY, [OpenStream(left_open)])
    slack.fail("chat.stopStream", "internal_error")
    recorder = StopRecorder(Recorder(thread, TraceWriter(io.StringIO())), client)

    await recorder(KEY, stop_of(user="U0ASKER"), [])

    # Still recorded as open: the thread's next run or a sweep deletes it.
    assert thread.open_streams(KEY) == [OpenStream(left_open)]
    assert last_entry(thread).endswith(
        "the answer stopped there, and the request counts as answered. Nothing of it had been "
        "shown."
    )
    assert "(not " not in last_entry(thread)  # who asked pressed stop


async def test_a_stream_gone_already_and_a_start_slack_stopped_are_kept(thread, slack) -> None:
    client = client_of(slack)
    gone = await streaming(client, "Done")
    await client.chat_stopStream(channel=KEY.channel, ts=gone)
    # A start in flight when Slack stopped it: the run never learnt its ts.
    unconfirmed = await streaming(client, "Hel")
    await client.chat_stopStream(channel=KEY.channel, ts=unconfirmed)
    thread.change_open_streams(KEY, [OpenStream(gone), OpenStream(KEY.thread_ts, "starting")])
    recorder = StopRecorder(Recorder(thread, TraceWriter(io.StringIO())), client)

    await recorder(KEY, stop_of(unconfirmed), [])

    assert thread.open_streams(KEY) == []
    assert last_entry(thread).endswith("What it had streamed stays in the thread (2 message(s)).")


def test_the_entry_quotes_only_what_was_shown_as_json_strings() -> None:
    shown = [("1.1", 'He said "hi"\n'), ("1.2", ""), ("1.3", "ünïcode")]
    text = stop_entry(stop_of(), "<@U0PRESSER>", shown, 3)
    assert text.endswith(
        'What it had streamed stays in the thread: "He said \\"hi\\"\\n" "ünïcode".'
    )
    assert "(not " not in text
