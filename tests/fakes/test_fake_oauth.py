"""The fake Slack's many workspaces and `oauth.v2.access`, driven through slack-sdk: Slack's
answer and errors for a code and a refresh token, and every call's token checked against the
workspace the call is about."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from assistant.fakes import FakeSlack, ids
from assistant.fakes._server import DEFAULT_TIMEOUT

CLIENT_ID, SECRET = "111.222", "fake-secret"
TEAM_A, TEAM_B = "T0TEAMAAAA", "T0TEAMBBBB"
CHANNEL_A, CHANNEL_B = "C0CHANAAAA", "C0CHANBBBB"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        fake.oauth_app(CLIENT_ID, SECRET)
        fake.add_workspace(TEAM_A, bot_token="xoxb-a", channels=(CHANNEL_A,))
        fake.add_workspace(TEAM_B, bot_token="xoxb-b", channels=(CHANNEL_B,))
        yield fake


def web(slack: FakeSlack, token: str | None = None) -> WebClient:
    return WebClient(token=token, base_url=slack.api_url)


def error_of(call) -> str:
    with pytest.raises(SlackApiError) as failed:
        call()
    return failed.value.response["error"]


def test_a_code_is_exchanged_once_for_the_workspace_bot_token(slack: FakeSlack) -> None:
    code = slack.authorize(TEAM_A)
    answer = web(slack).oauth_v2_access(client_id=CLIENT_ID, client_secret=SECRET, code=code)
    assert answer["token_type"] == "bot" and answer["team"] == {
        "id": TEAM_A,
        "name": "Team " + TEAM_A,
    }
    assert answer["bot_user_id"] == ids.BOT_USER_ID and answer["app_id"] == ids.APP_ID
    assert "refresh_token" not in answer  # not a rotating install
    token = answer["access_token"]
    assert web(slack, token).auth_test()["team_id"] == TEAM_A
    again = lambda: web(slack).oauth_v2_access(client_id=CLIENT_ID, client_secret=SECRET, code=code)  # noqa: E731
    assert error_of(again) == "invalid_code"


def test_bad_client_credentials_are_refused_as_slack_refuses_them(slack: FakeSlack) -> None:
    code = slack.authorize(TEAM_A)
    client = web(slack)
    assert (
        error_of(lambda: client.oauth_v2_access(client_id=CLIENT_ID, client_secret="x", code=code))
        == "bad_client_secret"
    )
    assert (
        error_of(lambda: client.oauth_v2_access(client_id="9.9", client_secret=SECRET, code=code))
        == "invalid_client_id"
    )
    assert (
        error_of(
            lambda: client.oauth_v2_access(client_id=CLIENT_ID, client_secret=SECRET, code="nope")
        )
        == "invalid_code"
    )


def test_a_rotating_install_refreshes_its_token_once_per_refresh_token(slack: FakeSlack) -> None:
    slack.workspaces[TEAM_A].rotating = True
    client = web(slack)
    first = client.oauth_v2_access(
        client_id=CLIENT_ID, client_secret=SECRET, code=slack.authorize(TEAM_A)
    )
    assert first["expires_in"] > 0 and first["refresh_token"].startswith("xoxe-")

    def refresh():
        return client.oauth_v2_access(
            client_id=CLIENT_ID, client_secret=SECRET, grant_type="refresh_token",
            refresh_token=first["refresh_token"],
        )  # fmt: skip

    second = refresh()
    assert second["access_token"] != first["access_token"] and second["token_type"] == "bot"
    assert web(slack, second["access_token"]).auth_test()["team_id"] == TEAM_A
    assert error_of(refresh) == "invalid_refresh_token"


def test_a_token_is_good_only_for_its_own_workspace(slack: FakeSlack) -> None:
    a, b = web(slack, "xoxb-a"), web(slack, "xoxb-b")
    assert a.chat_postMessage(channel=CHANNEL_A, text="hi")["ok"]
    assert error_of(lambda: a.chat_postMessage(channel=CHANNEL_B, text="hi")) == "channel_not_found"
    assert error_of(lambda: b.conversations_info(channel=CHANNEL_A)) == "channel_not_found"
    assert (
        error_of(lambda: b.conversations_replies(channel=CHANNEL_A, ts="1.0"))
        == "channel_not_found"
    )
    assert (
        error_of(lambda: a.usergroups_users_list(usergroup="S1", team_id=TEAM_B))
        == "team_access_not_granted"
    )
    assert error_of(lambda: web(slack, "xoxb-unknown").auth_test()) == "invalid_auth"
    slack.uninstall(TEAM_A)
    assert error_of(lambda: a.chat_postMessage(channel=CHANNEL_A, text="hi")) == "token_revoked"
    assert b.chat_postMessage(channel=CHANNEL_B, text="hi")["ok"]


def test_a_file_is_served_only_to_its_workspace_token(slack: FakeSlack) -> None:
    picture = slack.add_file("pic.png", "image/png", b"\x89PNG-bytes", team=TEAM_A)

    def download(token: str) -> bytes:
        request = urllib.request.Request(picture["url_private"])
        request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request, timeout=DEFAULT_TIMEOUT) as answer:
            return answer.read()

    assert b"<html" in download("xoxb-b").lower()  # Slack's sign-in page, as for no access
    assert download("xoxb-a") == b"\x89PNG-bytes"
    assert slack.downloads == [picture["id"]]
