"""The fake Slack's agent sessions (`agents.sessions.setStatus`, `rename`, `chat.stopStream`'s
`session_status`) with Slack's rules, through slack-sdk's own client, and the stop button:
Slack stops the app's streams and sends `agent_session_stopped` in its documented shape."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from assistant.fakes import FakeSlack, ids
from assistant.fakes.events.panel import title_changed

CHANNEL = ids.CHANNEL_ID


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(agent=True) as fake:
        yield fake


@pytest.fixture
def client(slack: FakeSlack) -> WebClient:
    return WebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)


def error(call) -> str:
    with pytest.raises(SlackApiError) as raised:
        call()
    return raised.value.response["error"]


def test_set_status_creates_the_session_then_changes_only_its_status(slack, client):
    root = slack.add_message(CHANNEL, text="lunch?")["ts"]
    answer = client.agents_sessions_setStatus(
        channel_id=CHANNEL,
        thread_ts=root,
        status="processing",
        title="Lunch",
        initiator_user_id="U1",
    )
    assert answer["status"] == "processing" and answer["title"] == "Lunch"
    assert "warning" not in answer
    client.agents_sessions_setStatus(
        channel_id=CHANNEL, thread_ts=root, status="active", title="Ignored", initiator_user_id="U2"
    )
    session = slack.agents.session(CHANNEL, root)
    assert (session.statuses, session.title, session.initiator) == (
        ["processing", "active"], "Lunch", "U1",
    )  # fmt: skip
    client.agents_sessions_rename(channel_id=CHANNEL, thread_ts=root, title="Lunch plans")
    assert slack.agents.session(CHANNEL, root).title == "Lunch plans"


def test_set_status_and_rename_follow_slack_s_rules(slack, client):
    root = slack.add_message(CHANNEL, text="lunch?")["ts"]
    set_status = client.agents_sessions_setStatus
    assert error(lambda: set_status(channel_id=CHANNEL, thread_ts=root, status="busy")) == (
        "invalid_arguments"
    )
    too_long = "x" * 201
    assert (
        error(
            lambda: set_status(channel_id=CHANNEL, thread_ts=root, status="active", title=too_long)
        )
        == "invalid_arguments"
    )
    assert error(lambda: set_status(channel_id="C404", thread_ts=root, status="active")) == (
        "channel_not_found"
    )
    assert error(lambda: set_status(channel_id=CHANNEL, thread_ts="1.2", status="active")) == (
        "invalid_thread_ts"
    )
    rename = client.agents_sessions_rename
    assert error(lambda: rename(channel_id=CHANNEL, thread_ts=root, title="New")) == (
        "session_not_found"
    )
    set_status(channel_id=CHANNEL, thread_ts=root, status="active")
    assert error(lambda: rename(channel_id=CHANNEL, thread_ts=root, title="")) == (
        "invalid_arguments"
    )
    slack.agents.subscribed = False
    answer = set_status(channel_id=CHANNEL, thread_ts=root, status="processing")
    assert answer["warning"] == "missing_agent_session_stopped_event_subscription"
    slack.agents.agent = False  # not declared as an agent
    assert error(lambda: set_status(channel_id=CHANNEL, thread_ts=root, status="active")) == (
        "not_authorized"
    )
    assert error(lambda: rename(channel_id=CHANNEL, thread_ts=root, title="New")) == (
        "not_authorized"
    )


def test_the_stop_button_stops_the_streams_and_stop_stream_sets_the_session(slack, client):
    root = slack.add_message(ids.DM_CHANNEL_ID, user=ids.USER_ID, text="lunch?")["ts"]
    dm = ids.DM_CHANNEL_ID
    client.agents_sessions_setStatus(channel_id=dm, thread_ts=root, status="processing")
    first = client.chat_startStream(channel=dm, thread_ts=root, markdown_text="Noodles")["ts"]
    second = client.chat_startStream(channel=dm, thread_ts=root, markdown_text="or soup")["ts"]
    client.chat_stopStream(channel=dm, ts=second, session_status="processing")

    event = slack.agents.press_stop(dm, root, user="U0FAKEBOB")
    assert set(event) == {
        "type",
        "channel",
        "thread_ts",
        "user",
        "streaming_message_ts",
        "event_ts",
    }
    assert (event["type"], event["channel"], event["thread_ts"], event["user"]) == (
        "agent_session_stopped", dm, root, "U0FAKEBOB",
    )  # fmt: skip
    assert event["streaming_message_ts"] == [first]  # the one still streaming
    assert slack.store.get(dm, first)["text"] == "Noodles"  # kept as shown
    assert error(lambda: client.chat_appendStream(channel=dm, ts=first, markdown_text="!")) == (
        "message_not_in_streaming_state"
    )
    assert slack.agents.session(dm, root).status == "processing"  # the app's to change
    third = client.chat_startStream(channel=dm, thread_ts=root, markdown_text="Done")["ts"]
    assert error(lambda: client.chat_stopStream(channel=dm, ts=third, session_status="idle")) == (
        "invalid_arguments"
    )
    client.chat_stopStream(channel=dm, ts=third, session_status="active")
    assert slack.agents.session(dm, root).status == "active"


def test_stop_stream_without_a_session_status_sets_slack_s_default_active(slack, client):
    root = slack.add_message(ids.DM_CHANNEL_ID, user=ids.USER_ID, text="lunch?")["ts"]
    dm = ids.DM_CHANNEL_ID
    client.agents_sessions_setStatus(channel_id=dm, thread_ts=root, status="processing")
    ts = client.chat_startStream(channel=dm, thread_ts=root, markdown_text="Noodles")["ts"]
    client.chat_stopStream(channel=dm, ts=ts)
    assert slack.agents.session(dm, root).statuses == ["processing", "active"]


def test_the_old_methods_are_bridged_to_the_session_for_an_agent(slack, client):
    """The 2026-08-20 contract: free progress text is refused; a session status or an empty
    one sets the session; setTitle renames it (and needs it)."""
    root = slack.add_message(CHANNEL, text="lunch?")["ts"]
    assert (
        error(
            lambda: client.assistant_threads_setStatus(
                channel_id=CHANNEL, thread_ts=root, status="is thinking…"
            )
        )
        == "invalid_arguments"
    )
    assert (
        error(
            lambda: client.assistant_threads_setTitle(channel_id=CHANNEL, thread_ts=root, title="x")
        )
        == "session_not_found"
    )
    client.assistant_threads_setStatus(channel_id=CHANNEL, thread_ts=root, status="processing")
    client.assistant_threads_setStatus(channel_id=CHANNEL, thread_ts=root, status="")
    client.assistant_threads_setTitle(channel_id=CHANNEL, thread_ts=root, title="Lunch")
    session = slack.agents.session(CHANNEL, root)
    assert session.statuses == ["processing", "active"]
    assert session.title == "Lunch" and session.renames == ["Lunch"]
    assert slack.assistant_threads.status(CHANNEL, root) is None  # no legacy status shown


def test_a_person_renaming_a_session_sends_the_title_changed_event(slack, client):
    root = slack.add_message(CHANNEL, text="lunch?")["ts"]
    client.agents_sessions_setStatus(
        channel_id=CHANNEL, thread_ts=root, status="active", title="lunch?"
    )
    previous = slack.agents.rename_by_person(CHANNEL, root, "Team lunch")
    event = title_changed(CHANNEL, root, "Team lunch", previous)
    assert event == {
        "type": "agent_session_title_changed",
        "channel": CHANNEL,
        "thread_ts": root,
        "title": "Team lunch",
        "previous_title": "lunch?",
        "user": ids.USER_ID,
        "team_id": ids.TEAM_ID,
        "event_ts": event["event_ts"],
    }
    assert slack.agents.session(CHANNEL, root).title == "Team lunch"
