"""Installed through OAuth, each event's authorization and each token refresh (issue 32): Bolt's
OAuth flow and slack-sdk's SQLAlchemy installation store against the fake Slack over HTTP.

An event is authorized from the installation as stored, asking Slack nothing: a Web API blip
loses no event. Where authorization cannot be decided (the store unreadable, a token expired
that Slack does not refresh just now) Slack gets a 500 and sends the event again. A rotating
token is refreshed once however many uses want it at the same moment, within one process and
across two (PostgreSQL): Slack accepts each refresh token once."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from sqlalchemy import create_engine, text

from assistant.fakes.requests import event_callback
from assistant.run.scheduling.workspace_runs import NOT_INSTALLED
from tests.app.test_installs import (
    CHANNEL_A,
    TEAM_A,
    bot_of,
    install,
    refreshes_of,
    say_in,
    start_oauth_app,
)
from tests.harness import mention, script_answers, thread_of

pytestmark = pytest.mark.app_backend

DEADLINE = 30.0


@pytest.fixture
def oauth_app(make_app, slack):
    return start_oauth_app(make_app, slack)


def wait_until(condition, what: str) -> None:
    """Until `condition()` (another thread's or process's doing: nothing to wait on)."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"waited {DEADLINE} s for {what}"
        time.sleep(0.01)


def test_an_event_is_recorded_while_slack_fails_and_no_auth_test_is_asked(oauth_app, slack, model):
    install(oauth_app, slack, TEAM_A)  # Bolt's install flow asks auth.test for the bot id
    asked = len(slack.calls_to("auth.test"))
    end = slack.outage("auth.test")  # Bolt's own authorize asked it before every event
    script_answers(model, 1)
    event = say_in(oauth_app, slack, TEAM_A, CHANNEL_A, "hello")
    slack.wait_for_call("reactions.remove")
    oauth_app.wait_idle()
    end()
    assert oauth_app.log(thread_of(event, TEAM_A))[1]["content"]["text"].endswith("hello")
    assert len(slack.calls_to("auth.test")) == asked


def test_an_event_whose_installation_cannot_be_read_is_answered_500_and_recorded_on_retry(
    oauth_app, slack, model, app_stores, caplog
):
    install(oauth_app, slack, TEAM_A)
    script_answers(model, 1)
    database = create_engine(app_stores[0])
    with database.begin() as connection:  # the store cannot answer for installations
        connection.execute(text("ALTER TABLE slack_bots RENAME TO slack_bots_away"))
    event = mention(slack, "hello", channel=CHANNEL_A)
    payload = event_callback(event, team_id=TEAM_A)
    with caplog.at_level(logging.WARNING):
        assert oauth_app.send_event(event, payload=payload).status == 500  # sent again
    with database.begin() as connection:
        connection.execute(text("ALTER TABLE slack_bots_away RENAME TO slack_bots"))
    database.dispose()
    assert oauth_app.log(thread_of(event, TEAM_A)) == []
    assert oauth_app.send_event(event, payload=payload, retry_num=1).status == 200
    slack.wait_for_call("reactions.remove")
    oauth_app.wait_idle()
    assert oauth_app.log(thread_of(event, TEAM_A))[-1]["content"]["toolCall"] == "finishRequest"


def test_an_expired_token_that_slack_fails_to_refresh_is_answered_500_until_it_does(
    oauth_app, slack, model, caplog
):
    slack.workspaces[TEAM_A].rotating = True
    slack.workspaces[TEAM_A].expires_in = -60  # expired already: no event can use it
    install(oauth_app, slack, TEAM_A)
    slack.server_error("oauth.v2.access", times=4)  # the client's own 3 retries, and more
    script_answers(model, 1)
    event = mention(slack, "hello", channel=CHANNEL_A)
    payload = event_callback(event, team_id=TEAM_A)
    with caplog.at_level(logging.WARNING):
        assert oauth_app.send_event(event, payload=payload).status == 500
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert lines[0] == f"could not refresh the token of workspace {TEAM_A} (fatal_error)"
    assert len(lines) == 2 and "Slack is answered 500" in lines[1], lines
    assert oauth_app.log(thread_of(event, TEAM_A)) == []

    slack.workspaces[TEAM_A].expires_in = 43_200
    oauth_app.assistant.workspaces._failed.clear()  # Slack's retry, as if 30 s later
    assert oauth_app.send_event(event, payload=payload, retry_num=1).status == 200
    slack.wait_for_call("reactions.remove")
    oauth_app.wait_idle()
    newest = slack.workspaces[TEAM_A].tokens[-1]
    assert {c.token for c in slack.calls_to("chat.postMessage")} == {newest}


def test_two_events_at_once_spend_the_refresh_token_once(oauth_app, slack, model, app_stores):
    slack.workspaces[TEAM_A].rotating = True
    slack.workspaces[TEAM_A].expires_in = 60  # within 120 minutes: refreshed on its next use
    install(oauth_app, slack, TEAM_A)
    slack.workspaces[TEAM_A].expires_in = 43_200
    script_answers(model, 2)
    first, second = slack.hold("oauth.v2.access"), slack.hold("oauth.v2.access")
    events = [mention(slack, f"hello {n}", channel=CHANNEL_A) for n in (1, 2)]
    statuses: list[int] = []

    def send(event) -> None:
        statuses.append(
            oauth_app.send_event(event, payload=event_callback(event, team_id=TEAM_A)).status
        )

    senders = [threading.Thread(target=send, args=(e,)) for e in events]
    senders[0].start()
    first.wait_reached()  # the first event's refresh is under way
    senders[1].start()
    # Until the second event also wants the token: it refreshes too (the race), or it waits
    # for the first's refresh (this process's lock of the workspace).
    lock = oauth_app.assistant.workspaces._locks[TEAM_A]
    wait_until(lambda: second.reached or bool(lock._waiters), "the second event")
    first.release()
    second.release()
    for sender in senders:
        sender.join(DEADLINE)
    assert statuses == [200, 200]
    slack.wait_for_call("reactions.remove", count=2)
    oauth_app.wait_idle()
    assert len(refreshes_of(slack)) == 1 and all(c.ok for c in refreshes_of(slack))
    for event in events:
        assert oauth_app.log(thread_of(event, TEAM_A))[-1]["content"]["toolCall"] == (
            "finishRequest"
        )
    assert bot_of(app_stores[0], TEAM_A).bot_token == slack.workspaces[TEAM_A].tokens[-1]
    assert NOT_INSTALLED not in str(oauth_app.log(thread_of(events[0], TEAM_A)))
