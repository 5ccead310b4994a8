"""The fake Slack's stream `chunks` (assistant/fakes/slack/chunks.py): markdown_text,
task_update and plan_update chunks are taken as Slack takes them, kept in the message's
timeline in order, and a chunk that breaks Slack's field rules is answered invalid_arguments."""

from __future__ import annotations

import pytest

from assistant.fakes import FakeSlack, ids
from tests.fakes.test_fake_streams import error_of, slack_client
from tests.harness import mention as say

TASK = {"type": "task_update", "id": "t1", "title": "Reading the thread", "status": "in_progress"}


def bad(**changes: object) -> dict:
    return {key: value for key, value in {**TASK, **changes}.items() if value is not None}


def test_task_cards_and_text_stream_into_one_message_in_order():
    with FakeSlack() as slack:
        parent = say(slack, "hi")
        client = slack_client(slack)
        to = {"recipient_user_id": ids.USER_ID, "recipient_team_id": ids.TEAM_ID}
        ts = client.chat_startStream(
            channel=ids.CHANNEL_ID, thread_ts=parent["ts"], task_display_mode="timeline",
            chunks=[{"type": "plan_update", "title": "Answering"}, TASK], **to,
        )["ts"]  # fmt: skip
        done = {**TASK, "status": "complete", "output": "3 messages"}
        source = {"type": "url", "url": "https://acme.slack.com/archives/C1/p1", "text": "link"}
        client.chat_appendStream(channel=ids.CHANNEL_ID, ts=ts, chunks=[done])  # cards alone
        client.chat_appendStream(
            channel=ids.CHANNEL_ID, ts=ts,
            chunks=[{**TASK, "id": "t2", "status": "error", "sources": [source]},
                    {"type": "markdown_text", "text": "Hello"}],
        )  # fmt: skip
        stopped = client.chat_stopStream(
            channel=ids.CHANNEL_ID, ts=ts, chunks=[{"type": "markdown_text", "text": "!"}]
        )
        assert stopped["message"]["text"] == "Hello!"
        timeline = slack.streams.timelines[(ids.CHANNEL_ID, ts)]
        assert [c.get("status", c["type"]) for c in timeline] == [
            "plan_update", "in_progress", "complete", "error", "markdown_text", "markdown_text",
        ]  # fmt: skip


@pytest.mark.parametrize(
    "chunk",
    [
        bad(status="done"),  # not one of pending, in_progress, complete, error
        bad(status=None),
        bad(id=None),
        bad(id=""),
        bad(id="x" * 256),
        bad(title=None),
        bad(title="x" * 257),
        bad(details="x" * 257),
        bad(output=5),
        bad(sources=[{"type": "link", "url": "https://x", "text": "x"}]),
        {"type": "plan_update"},
        {"type": "markdown_text"},
        {"type": "thinking", "text": "hm"},
        "text",
    ],
)
def test_a_chunk_against_slack_s_field_rules_is_refused(chunk):
    with FakeSlack() as slack:
        parent = say(slack, "hi")
        client = slack_client(slack)
        to = {"recipient_user_id": ids.USER_ID, "recipient_team_id": ids.TEAM_ID}
        thread = {"channel": ids.CHANNEL_ID, "thread_ts": parent["ts"], **to}
        assert error_of(client.chat_startStream, **thread, chunks=[chunk]) == "invalid_arguments"
        ts = client.chat_startStream(**thread, chunks=[TASK])["ts"]
        for method in (client.chat_appendStream, client.chat_stopStream):
            assert error_of(method, channel=ids.CHANNEL_ID, ts=ts, chunks=[chunk]) == (
                "invalid_arguments"
            )
        assert error_of(client.chat_startStream, **thread, task_display_mode="list") == (
            "invalid_arguments"
        )
