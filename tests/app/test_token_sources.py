"""One SLACK_BOT_TOKEN beside installs through OAuth (issue 32): a process with one token
answers only its own workspace's threads, and one started on a database that holds OAuth
installations is refused at start with one line (exit status 2)."""

from __future__ import annotations

import pytest
from slack_sdk.oauth.installation_store import Installation

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from assistant.slack.installs import Installations
from bench.server import app_env, free_port
from context.storage import open_store
from tests.process import run_assistant

OTHER_TEAM = "T0OTHERTEAM"
REFUSED = (
    "SLACK_BOT_TOKEN: this database holds installs through OAuth (1 workspaces), whose threads "
    "one bot token cannot answer: set SLACK_CLIENT_ID and SLACK_CLIENT_SECRET instead, as the "
    "processes that installed them have"
)

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners


def installed_elsewhere(url: str) -> None:
    """The database as an OAuth ingress leaves it: another workspace's installation."""
    store = open_store(url)
    try:
        Installations(store, "1234.5678").save(
            Installation(
                app_id=ids.APP_ID, enterprise_id=None, team_id=OTHER_TEAM,
                user_id=ids.USER_ID, bot_token="xoxb-other-workspace", bot_id=ids.BOT_ID,
                bot_user_id=ids.BOT_USER_ID, bot_scopes="chat:write",
            )
        )  # fmt: skip
    finally:
        store.close()


def test_serve_and_worker_with_one_token_refuse_a_database_of_oauth_installs(store_url, tmp_path):
    installed_elsewhere(store_url)
    with FakeSlack() as slack, FakeOpenAI() as model:
        env = app_env(slack, model, store_url, PORT=str(free_port()))
        commands = [("serve",), ("worker",)] if "postgresql" in store_url else [("serve",)]
        for command in commands:
            result = run_assistant(*command, env=env, cwd=tmp_path)
            assert result.returncode == 2, result.stderr
            assert result.stderr.splitlines() == [f"assistant {command[0]}: {REFUSED}"]
        assert slack.calls == [] and model.requests == []
