"""Installs to many workspaces through OAuth, end to end over HTTP with Bolt's own flow
(docs/slack-setup.md, "Distributing the app"): the install page and its state cookie, Slack's
redirect with a bad state (refused) and a good one (the installation stored in the logs' database),
two workspaces answered at once each with its own token (the fake fails any crossing), an uninstall,
a token refreshed, and no secret in any output."""

from __future__ import annotations

import logging
import re
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from slack_sdk.oauth.installation_store import Installation
from sqlalchemy import create_engine, text

from assistant.app_oauth import bot_scopes
from assistant.fakes import ids
from assistant.fakes.requests import event_callback
from assistant.fakes.slack.oauth import EXPIRES_IN
from assistant.run.scheduling.workspace_runs import NOT_INSTALLED
from assistant.slack.installs import MAX_LIVE_STATES, Installations
from context.storage import open_store
from tests.app.test_durable_runs import crashed_after
from tests.harness import mention, script_answers, thread_of

pytestmark = pytest.mark.app_backend

CLIENT_ID = "1234.5678"
CLIENT_SECRET = "fake-client-secret-0123456789"
TEAM_A, TEAM_B = "T0TEAMAAAA", "T0TEAMBBBB"
CHANNEL_A, CHANNEL_B = "C0CHANAAAA", "C0CHANBBBB"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(200)


@pytest.fixture
def oauth_app(make_app, slack):
    return start_oauth_app(make_app, slack)


def start_oauth_app(make_app, slack):
    """The app installed through OAuth, and two workspaces it is not installed in yet."""
    slack.oauth_app(CLIENT_ID, CLIENT_SECRET)
    slack.add_workspace(TEAM_A, channels=(CHANNEL_A,))
    slack.add_workspace(TEAM_B, channels=(CHANNEL_B,))
    return make_app(
        slack_bot_token=None, slack_client_id=CLIENT_ID, slack_client_secret=CLIENT_SECRET
    )


def start_install(app) -> tuple[str, dict[str, list[str]]]:
    """GET /slack/install: the state cookie, and the query of Slack's authorize URL."""
    page = app.request("GET", "/slack/install")
    assert page.status == 200
    cookie = SimpleCookie(page.headers["set-cookie"])
    state = cookie["slack-app-oauth-state"].value
    url = re.search(rb'href="(https://slack.com/oauth/v2/authorize\?[^"]+)"', page.body)
    assert url is not None
    return state, parse_qs(urlparse(url.group(1).decode().replace("&amp;", "&")).query)


def redirect(app, code: str, state: str, cookie: str | None):
    headers = {"Cookie": f"slack-app-oauth-state={cookie}"} if cookie else {}
    query = urlencode({"code": code, "state": state})
    return app.request("GET", f"/slack/oauth_redirect?{query}", headers=headers)


def install(app, slack, team: str) -> None:
    state, _ = start_install(app)
    assert redirect(app, slack.authorize(team), state, state).status == 200


def bot_of(url: str, team: str):
    store = open_store(url)
    try:
        return Installations(store, CLIENT_ID).find_bot(enterprise_id=None, team_id=team)
    finally:
        store.close()


def say_in(app, slack, team: str, channel: str, text: str, **fields) -> dict:
    event = mention(slack, text, channel=channel, **fields)
    assert app.send_event(event, payload=event_callback(event, team_id=team)).status == 200
    return event


def test_an_install_with_a_bad_state_is_refused_and_a_good_one_is_stored(
    oauth_app, slack, app_stores
):
    state, query = start_install(oauth_app)
    # Exactly the manifest's bot scopes, no user scope, and the state of the cookie.
    assert query["scope"] == [",".join(bot_scopes())]
    assert query["client_id"] == [CLIENT_ID] and query["state"] == [state]
    assert "user_scope" not in query or query["user_scope"] == [""]

    code = slack.authorize(TEAM_A)
    # A state that is not this browser's (a forged link), or none at all: refused, nothing
    # asked of Slack, nothing stored.
    assert redirect(oauth_app, code, "forged-state", state).status != 200
    assert redirect(oauth_app, code, state, None).status != 200
    assert slack.calls_to("oauth.v2.access") == []
    assert bot_of(app_stores[0], TEAM_A) is None

    assert redirect(oauth_app, code, state, state).status == 200
    bot = bot_of(app_stores[0], TEAM_A)
    assert bot is not None and bot.bot_token == slack.workspaces[TEAM_A].tokens[-1]
    assert bot.bot_user_id == ids.BOT_USER_ID and bot.bot_scopes
    # A state is used once: the same redirect again is refused.
    assert redirect(oauth_app, slack.authorize(TEAM_A), state, state).status != 200


def test_install_states_expire_and_are_bounded(oauth_app, app_stores):
    """Anyone may open the install page, and each visit writes a state: states expire and are
    deleted, and at most MAX_LIVE_STATES are under way (then: 429, nothing written)."""
    for _ in range(MAX_LIVE_STATES):
        assert oauth_app.request("GET", "/slack/install").status == 200
    refused = oauth_app.request("GET", "/slack/install")
    assert refused.status == 429 and refused.headers["retry-after"] == "60"
    database = create_engine(app_stores[0])
    count = text("SELECT count(*) FROM slack_oauth_states")
    with database.begin() as connection:
        assert connection.execute(count).scalar_one() == MAX_LIVE_STATES
        # Ten minutes later: every state has expired.
        connection.execute(text("UPDATE slack_oauth_states SET expire_at = '2000-01-01'"))
    start_install(oauth_app)  # a new install is welcome again, and the expired are gone
    with database.begin() as connection:
        assert connection.execute(count).scalar_one() == 1
    database.dispose()


def test_two_workspaces_are_answered_at_once_each_with_its_own_token(oauth_app, slack, model):
    install(oauth_app, slack, TEAM_A)
    install(oauth_app, slack, TEAM_B)
    script_answers(model, 2)
    held = slack.hold("chat.postMessage")  # A's answer waits while B's is written
    event_a = say_in(oauth_app, slack, TEAM_A, CHANNEL_A, "hello from A")
    slack.wait_for_call("reactions.add", where=lambda c: c.params["channel"] == CHANNEL_A)
    picture = slack.add_file("pic.png", "image/png", PNG, team=TEAM_B)  # B's to read only
    event_b = say_in(oauth_app, slack, TEAM_B, CHANNEL_B, "hello from B", files=[picture])
    slack.wait_for_call("reactions.add", where=lambda c: c.params["channel"] == CHANNEL_B)
    held.release()
    slack.wait_for_call("reactions.remove", count=2)
    oauth_app.wait_idle()

    tokens = {team: slack.workspaces[team].tokens[-1] for team in (TEAM_A, TEAM_B)}
    posts = {c.params["channel"]: c.token for c in slack.calls_to("chat.postMessage")}
    assert posts == {CHANNEL_A: tokens[TEAM_A], CHANNEL_B: tokens[TEAM_B]}
    assert set(slack.downloads) == {picture["id"]}  # with B's token: A's gets a sign-in page
    failed = [(c.method, c.response.get("error")) for c in slack.calls if not c.ok]
    assert set(failed) == {("agents.sessions.setStatus", "not_authorized")}  # not an agent app
    for call in slack.calls:  # every call about a channel, with that channel's workspace's
        channel = call.params.get("channel")
        if channel in (CHANNEL_A, CHANNEL_B):
            team = TEAM_A if channel == CHANNEL_A else TEAM_B
            assert call.token == tokens[team], call.method
    assert oauth_app.log(thread_of(event_a, TEAM_A))[-1]["content"]["toolCall"] == "finishRequest"
    assert oauth_app.log(thread_of(event_b, TEAM_B))[-1]["content"]["toolCall"] == "finishRequest"


UNINSTALLED = {"type": "app_uninstalled", "event_ts": "1700000000.000100"}
REVOKED = {
    "type": "tokens_revoked",
    "tokens": {"oauth": [], "bot": [ids.BOT_USER_ID]},
    "event_ts": "1700000000.000100",
}


@pytest.mark.parametrize("uninstalled", [UNINSTALLED, REVOKED], ids=["uninstalled", "revoked"])
def test_after_an_uninstall_nothing_is_called_for_the_workspace_and_its_logs_stay(
    uninstalled, oauth_app, slack, model, app_stores, caplog
):
    install(oauth_app, slack, TEAM_A)
    install(oauth_app, slack, TEAM_B)
    script_answers(model, 1)
    event = say_in(oauth_app, slack, TEAM_A, CHANNEL_A, "hello")
    slack.wait_for_call("reactions.remove")
    oauth_app.wait_idle()
    log = oauth_app.log(thread_of(event, TEAM_A))

    slack.uninstall(TEAM_A)
    payload = event_callback(uninstalled, team_id=TEAM_A)
    with caplog.at_level(logging.WARNING):
        assert oauth_app.send_event(uninstalled, payload=payload).status == 200
        oauth_app.wait_listeners()
    assert bot_of(app_stores[0], TEAM_A) is None
    assert bot_of(app_stores[0], TEAM_B) is not None  # the other workspace's stays
    said = [r.getMessage() for r in caplog.records if r.name.startswith("assistant")]
    assert len(said) == 1 and f"workspace {TEAM_A}" in said[0], said

    calls = len(slack.calls)
    later = mention(slack, "still there?", channel=CHANNEL_A)
    oauth_app.send_event(later, payload=event_callback(later, team_id=TEAM_A))
    oauth_app.wait_handled()
    assert len(slack.calls) == calls  # nothing asked of Slack for it
    assert oauth_app.log(thread_of(event, TEAM_A)) == log  # its log kept, as it was
    assert oauth_app.log(thread_of(later, TEAM_A)) == []


@pytest.mark.listeners  # no install page: the Bolt tier (tests/bolt_tier.py)
def test_a_thread_owed_in_a_workspace_no_longer_installed_ends_without_a_slack_call(
    make_app, slack, model, app_stores, caplog
):
    slack.oauth_app(CLIENT_ID, CLIENT_SECRET)
    slack.add_workspace(ids.TEAM_ID, channels=())
    key = crashed_after(app_stores[0], slack)  # a mention owed an answer, from before
    with caplog.at_level(logging.WARNING):
        app = make_app(
            slack_bot_token=None, slack_client_id=CLIENT_ID, slack_client_secret=CLIENT_SECRET
        )
        app.wait_idle()
    log = app.log(key)
    assert log[-1]["content"] == NOT_INSTALLED and len(log) == 3
    assert app.assistant.store.pending(key) == []
    assert slack.calls == [] and model.requests == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        f"thread {key} not answered: the app is not installed in its workspace"
    ]


def test_a_refused_refresh_keeps_the_request_owed_until_the_app_is_installed_again(
    make_app, slack, model, app_stores, caplog
):
    slack.oauth_app(CLIENT_ID, CLIENT_SECRET)
    slack.add_workspace(ids.TEAM_ID, channels=())
    key = crashed_after(app_stores[0], slack)  # a mention owed an answer, from before
    store = open_store(app_stores[0])
    Installations(store, CLIENT_ID).save(
        Installation(
            app_id=ids.APP_ID, enterprise_id=None, team_id=ids.TEAM_ID,
            user_id=ids.USER_ID, bot_token="xoxb-expired", bot_id=ids.BOT_ID,
            bot_user_id=ids.BOT_USER_ID, bot_scopes="chat:write",
            bot_refresh_token="xoxe-1-refused", bot_token_expires_in=-60,
        )
    )  # fmt: skip
    store.close()
    with caplog.at_level(logging.WARNING):
        app = make_app(
            slack_bot_token=None, slack_client_id=CLIENT_ID, slack_client_secret=CLIENT_SECRET
        )
        app.wait_idle()
    assert len(app.log(key)) == 2  # nothing said in it: no token to say it with
    assert len(app.assistant.store.pending(key)) == 1  # still owed
    assert [c.method for c in slack.calls] == ["oauth.v2.access"]  # the one refused refresh
    refused = f"Slack refused to refresh the token of workspace {ids.TEAM_ID}"
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        f"{refused} (invalid_refresh_token)",
        f"stopped the run in thread {key} (the bot token of workspace {ids.TEAM_ID} has "
        "expired and slack refused to refresh it (invalid_refresh_token)); its request stays "
        "owed",
    ]

    install(app, slack, ids.TEAM_ID)  # installed again: a new token
    script_answers(model, 1)
    app.assistant.scheduler.sweep_now()
    slack.wait_for_call("chat.postMessage")
    app.wait_idle()
    assert app.log(key)[-1]["content"]["toolCall"] == "finishRequest"
    assert {c.token for c in slack.calls_to("chat.postMessage")} == {
        slack.workspaces[ids.TEAM_ID].tokens[-1]
    }


def test_an_expiring_token_is_refreshed_and_used_and_no_secret_is_in_any_output(
    oauth_app, slack, model, caplog, capfd
):
    caplog.set_level(logging.DEBUG)
    slack.workspaces[TEAM_A].rotating = True
    slack.workspaces[TEAM_A].expires_in = 60  # within Bolt's 120 minutes: refreshed on use
    install(oauth_app, slack, TEAM_A)
    first = slack.workspaces[TEAM_A].tokens[-1]
    slack.workspaces[TEAM_A].expires_in = EXPIRES_IN
    script_answers(model, 1)
    say_in(oauth_app, slack, TEAM_A, CHANNEL_A, "hello")
    slack.wait_for_call("reactions.remove")
    oauth_app.wait_idle()

    refreshes = [c for c in slack.calls_to("oauth.v2.access") if c.params.get("grant_type")]
    assert [c.params["grant_type"] for c in refreshes] == ["refresh_token"]
    newest = slack.workspaces[TEAM_A].tokens[-1]
    assert newest != first
    assert {c.token for c in slack.calls_to("chat.postMessage")} == {newest}

    out, err = capfd.readouterr()
    output = "\n".join([out, err, oauth_app.trace.getvalue(), caplog.text])
    secrets = [CLIENT_SECRET, first, newest, *slack._refresh_tokens]
    assert [s for s in secrets if s in output] == []


def test_a_refused_refresh_is_one_line_and_the_token_is_used_while_it_works(
    oauth_app, slack, model, caplog
):
    slack.workspaces[TEAM_A].rotating = True
    slack.workspaces[TEAM_A].expires_in = 60  # to be refreshed on its next use
    install(oauth_app, slack, TEAM_A)
    token = slack.workspaces[TEAM_A].tokens[-1]
    slack.refuse_refresh(TEAM_A)
    script_answers(model, 1)
    with caplog.at_level(logging.INFO):
        event = say_in(oauth_app, slack, TEAM_A, CHANNEL_A, "hello")
        slack.wait_for_call("reactions.remove")
        oauth_app.wait_handled()
    assert len(refreshes_of(slack)) == 1  # refused once, not asked again
    assert oauth_app.log(thread_of(event, TEAM_A))[-1]["content"]["toolCall"] == "finishRequest"
    assert {c.token for c in slack.calls_to("chat.postMessage")} == {token}
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert [line for line in lines if "agent sessions" not in line] == [
        f"Slack refused to refresh the token of workspace {TEAM_A} (invalid_refresh_token)"
    ]


def refreshes_of(slack) -> list:
    return [c for c in slack.calls_to("oauth.v2.access") if c.params.get("grant_type")]


@pytest.mark.listeners  # no install page: the Bolt tier (tests/bolt_tier.py)
def test_with_one_bot_token_an_uninstall_is_one_line_and_nothing_else(app, slack, caplog):
    with caplog.at_level(logging.WARNING):
        assert app.send_event(UNINSTALLED).status == 200
        app.wait_listeners()
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        f"the app was uninstalled from workspace {ids.TEAM_ID}: SLACK_BOT_TOKEN works there no more"
    ]
    assert slack.calls == []
