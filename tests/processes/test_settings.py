"""Configuration that starts the bot: `run` and `serve` as real processes on a `.env` or
`.env.example` (the settings checked in process: tests/commands/test_settings.py)."""

from __future__ import annotations

import http.client
import signal

import pytest

from assistant.fakes import ids
from tests.cli import ROOT
from tests.commands.test_settings import OAUTH, SECRET_VALUES, free_port
from tests.process import TIMEOUT, AssistantProcess, clean_env


def test_a_complete_dotenv_is_enough_to_run(slack, model, tmp_path):
    (tmp_path / ".env").write_text(
        "\n".join(
            [
                f"SLACK_BOT_TOKEN={ids.BOT_TOKEN}",
                f"SLACK_APP_TOKEN={ids.APP_TOKEN}",
                f"SLACK_API_URL={slack.api_url}",
                f"OPENAI_API_KEY={ids.OPENAI_API_KEY}",
                f"OPENAI_BASE_URL={model.base_url}",
                "DATABASE_URL=sqlite:///from-dotenv.db",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    with AssistantProcess("run", env=clean_env(), cwd=tmp_path) as app:
        slack.wait_connected(timeout=TIMEOUT)
        code = app.stop(signal.SIGTERM)
    assert code == 0, app.stderr.text
    assert {c.token for c in slack.calls_to("apps.connections.open")} == {ids.APP_TOKEN}
    assert (tmp_path / "from-dotenv.db").exists()


# An empty SLACK_BOT_TOKEN (left in a .env) is no token: OAuth stays on (issue 32).
@pytest.mark.parametrize("bot_token", [{}, {"SLACK_BOT_TOKEN": ""}], ids=["unset", "empty"])
def test_serve_through_oauth_needs_no_bot_token_and_says_the_state_secret_is_unused(
    bot_token, slack, model, tmp_path
):
    env = clean_env(
        **OAUTH,
        **bot_token,
        SLACK_STATE_SECRET="topsecretstatesecret",
        SLACK_SIGNING_SECRET=SECRET_VALUES["SLACK_SIGNING_SECRET"],
        SLACK_API_URL=slack.api_url,
        OPENAI_API_KEY=ids.OPENAI_API_KEY,
        OPENAI_BASE_URL=model.base_url,
        PORT=str(free_port()),
    )
    port = int(env["PORT"])
    with AssistantProcess("serve", "--host", "127.0.0.1", env=env, cwd=tmp_path) as app:
        app.stderr.wait_for(r"Uvicorn running on")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        try:
            connection.request("GET", "/slack/install")
            page = connection.getresponse()
            assert page.status == 200 and b"client_id=111.222" in page.read()
        finally:
            connection.close()
        code = app.stop(signal.SIGTERM)
    assert code == 0, app.stderr.text
    unused = [line for line in app.stderr.text.splitlines() if "SLACK_STATE_SECRET" in line]
    assert len(unused) == 1 and unused[0].startswith("assistant serve: SLACK_STATE_SECRET is not")
    assert slack.calls == []  # no token to check: each workspace's comes with its install
    for secret in ("topsecretclientsecret", "topsecretstatesecret"):
        assert secret not in app.stdout.text + app.stderr.text


def test_env_example_copied_as_it_is_leaves_the_blank_bot_token_unset(slack, model, tmp_path):
    # .env.example leaves SLACK_BOT_TOKEN blank: with OAuth set, a blank is no token (an
    # empty one would be checked with Slack, refused, and the start would end).
    (tmp_path / ".env").write_bytes((ROOT / ".env.example").read_bytes())
    env = clean_env(
        **OAUTH,
        SLACK_SIGNING_SECRET=SECRET_VALUES["SLACK_SIGNING_SECRET"],
        SLACK_API_URL=slack.api_url,
        OPENAI_API_KEY=ids.OPENAI_API_KEY,
        OPENAI_BASE_URL=model.base_url,
        PORT=str(free_port()),
    )
    with AssistantProcess("serve", "--host", "127.0.0.1", env=env, cwd=tmp_path) as app:
        app.stderr.wait_for(r"Uvicorn running on")
        connection = http.client.HTTPConnection("127.0.0.1", int(env["PORT"]), timeout=TIMEOUT)
        try:
            connection.request("GET", "/slack/install")
            assert connection.getresponse().status == 200
        finally:
            connection.close()
        assert app.stop(signal.SIGTERM) == 0, app.stderr.text
    assert slack.calls == []
    assert "SLACK_STATE_SECRET" not in app.stderr.text  # commented out in the example
