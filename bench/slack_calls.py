"""Slack Web API calls per answered mention, by method, through the real app.

Twenty mentions in one thread that already held messages before the bot was mentioned, each
answered before the next; every run's model reads the thread history first (getThreadHistory,
then postMessage, then finishRequest). Slack limits conversations.replies hard, so the thread
should be fetched from Slack once and served from the store afterwards.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from bench import conversation
from bench.model import AnsweringModel
from bench.report import Figure
from tests.harness import RunningApp, app_settings

FULL_MENTIONS, SMOKE_MENTIONS = 20, 3


def run(smoke: bool = False) -> list[Figure]:
    count = SMOKE_MENTIONS if smoke else FULL_MENTIONS
    model = AnsweringModel(history_every=1)
    with (
        FakeSlack() as slack,
        FakeOpenAI(default=model) as fake,
        tempfile.TemporaryDirectory() as workdir,
    ):
        parent = slack.add_message(ids.CHANNEL_ID, text="Who has the offsite budget sheet?")
        for text in ("I think Ana does.", "It's in the finance drive, I believe."):
            slack.add_message(ids.CHANNEL_ID, text=text, thread_ts=parent["ts"])
        url = f"sqlite:///{Path(workdir) / 'app.db'}"
        app = RunningApp(app_settings(slack, fake, url)).start()
        try:
            made = list(
                itertools.islice(
                    conversation.thread_mentions(slack, parent["ts"], (ids.USER_ID,)), count
                )
            )
            before = conversation.per_method(slack)
            for mention in made:
                app.send_event(mention.event)
                conversation.wait_answered(slack, model, [mention], timeout=30)
            app.wait_idle()
        finally:
            app.stop()
        calls = conversation.per_method(slack) - before
        once = conversation.answered_once(slack, made)
        steps = len(fake.requests)
    posts, replies = calls["chat.postMessage"], calls["conversations.replies"]
    added, removed = calls["reactions.add"], calls["reactions.remove"]
    return [
        Figure("mentions answered exactly once", f"{once}/{count}", "all", once == count),
        Figure("model calls", f"{steps} ({steps / count:.1f} per mention)"),
        Figure(
            "chat.postMessage per answered mention",
            f"{posts / count:.2f} ({posts})",
            "1",
            posts == count,
        ),
        Figure(
            "reactions.add + reactions.remove per answered mention",
            f"{added / count:.2f} + {removed / count:.2f}",
            "1 + 1",
            added == removed == count,
        ),
        Figure(
            "conversations.replies for the whole thread",
            str(replies),
            "≤ 1",
            replies <= 1,
        ),
        Figure(
            "all calls by method",
            ", ".join(f"{method} {n}" for method, n in sorted(calls.items())),
        ),
        Figure("Slack calls per answered mention", f"{sum(calls.values()) / count:.2f}"),
    ]
