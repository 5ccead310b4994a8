"""A run's context on a real store and the fake Slack over HTTP, for the tests of run/'s parts
that stream into a thread (task cards, posts)."""

from __future__ import annotations

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from assistant.fakes import FakeSlack, ids
from assistant.run.core.run_context import RunContext
from context.entry import UserContent
from context.log import ContextLog
from context.storage import EntryMeta, Opening, Store, ThreadKey, ThreadMessage

KEY = ThreadKey(ids.TEAM_ID, "C0RUN", "1712233980.000100")
TS = "2025-04-04T12:33:00Z"
ASKER = "U0ASKER"


@pytest.fixture
def ctx(store: Store, slack: FakeSlack) -> RunContext:
    """A run's context on thread KEY, whose one question is in the store and in Slack."""
    store.record_message(
        KEY,
        UserContent(userid=f"<@{ASKER}>", text="what happened?"),
        TS,
        EntryMeta(slack_ts=KEY.thread_ts, wants_answer=True),
        Opening(lambda: "persona", TS),
        ThreadMessage(KEY.thread_ts, f"<@{ASKER}>", "what happened?"),
    )
    slack.add_message(KEY.channel, ts=KEY.thread_ts, user=ASKER, text="what happened?")
    client = AsyncWebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)
    mention = f"<@{ids.BOT_USER_ID}>"
    return RunContext(KEY, client, None, mention, ContextLog(store.entries(KEY)), store)
