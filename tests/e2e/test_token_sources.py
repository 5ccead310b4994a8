"""One SLACK_BOT_TOKEN beside installs through OAuth (issue 32): a process with one token
answers only its own workspace's threads, and one started on a database that holds OAuth
installations is refused at start with one line (exit status 2)."""

from __future__ import annotations

import pytest
from slack_sdk.oauth.installation_store import Installation

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from assistant.slack.history import slack_time
from assistant.slack.installs import Installations
from bench.server import AppServer, app_env, free_port
from context.entry import UserContent
from context.storage import EntryMeta, ThreadKey, open_store
from tests.e2e.test_durable_runs import PERSONA, crashed_after
from tests.harness import script_answers
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


def owed_in_other_team(url: str) -> ThreadKey:
    """A mention of another workspace, recorded and owed an answer."""
    key = ThreadKey(OTHER_TEAM, "C0OTHERCHAN", "1700000099.000100")
    store = open_store(url)
    try:
        store.append(key, PERSONA, slack_time(key.thread_ts))
        meta = EntryMeta(slack_ts=key.thread_ts, wants_answer=True)
        user = UserContent(userid=f"<@{ids.USER_ID}>", text="hello from elsewhere")
        store.append(key, user, slack_time(key.thread_ts), meta)
    finally:
        store.close()
    return key


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


def test_one_token_answers_its_own_workspace_and_leaves_another_s_owed(tmp_path):
    url = f"sqlite:///{tmp_path / 'app.db'}"
    with FakeSlack() as slack, FakeOpenAI() as fake:
        script_answers(fake, 1)
        own = crashed_after(url, slack)  # of ids.TEAM_ID, the token's workspace
        other = owed_in_other_team(url)
        with AppServer(slack, fake, tmp_path, DATABASE_URL=url) as app:
            # The run's last entry is recorded after its post: the trace shows it once written.
            app.process.stdout.wait_for("finishRequest")
            app.process.stderr.wait_for(f"threads of workspace {OTHER_TEAM} are owed answers")
            store = open_store(url)
            try:
                assert store.pending(own) == []
                assert len(store.pending(other)) == 1  # left for a process with its token
            finally:
                store.close()
        assert {c.params.get("channel") for c in slack.calls_to("chat.postMessage")} == {
            own.channel
        }
        assert all(c.params.get("channel") != other.channel for c in slack.calls)
