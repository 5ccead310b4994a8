"""One SLACK_BOT_TOKEN beside installs through OAuth (issue 32): a real `assistant serve` with
one token answers only its own workspace's threads (the refusal at start:
tests/app/test_token_sources.py)."""

from __future__ import annotations

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from assistant.slack.history import slack_time
from bench.server import AppServer
from context.entry import UserContent
from context.storage import EntryMeta, ThreadKey, open_store
from tests.app.test_durable_runs import PERSONA, crashed_after
from tests.app.test_token_sources import OTHER_TEAM
from tests.harness import script_answers


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
