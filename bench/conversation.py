"""Mentions with labels, and what Slack saw of their answers.

Every mention's text starts with a unique label (`bench.texts.tag`); the scripted model
(`bench.model.AnsweringModel`) names the labels it answers in its reply. So the fake Slack's
chat.postMessage calls say exactly which mention each reply answered, and in which thread.
"""

from __future__ import annotations

import itertools
import random
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.fakes import Call, FakeOpenAI, FakeSlack, ids
from assistant.run.progress.indicators import PROGRESS_REACTION
from bench import texts
from bench.model import AnsweringModel
from context.storage import open_store
from context.validate import validate_log
from tests.harness import RunningApp, app_settings, mention


@dataclass(frozen=True)
class Mention:
    label: str
    thread_ts: str
    event: dict[str, Any]


def mentions(
    slack: FakeSlack, threads: int, per_thread: int, first_thread: int = 0, seed: int = 1
) -> list[Mention]:
    """`per_thread` mentions in each of `threads` new threads, in rounds: every thread's
    first (which starts it), then every thread's second, and so on. Each message is also put
    in the fake Slack, so that conversations.replies finds it."""
    rng = random.Random(seed)
    made: list[Mention] = []
    parents: list[str] = []
    for round_ in range(per_thread):
        for number in range(threads):
            label = texts.tag(first_thread + number, round_)
            text = texts.user_text(rng, label)
            if round_ == 0:
                event = mention(slack, text)
                parents.append(event["ts"])
            else:
                event = mention(slack, text, thread_ts=parents[number])
            made.append(Mention(label, parents[number], event))
    return made


def thread_mentions(
    slack: FakeSlack, thread_ts: str, users: tuple[str, ...], seed: int = 1
) -> Iterator[Mention]:
    """Mentions in an existing thread, made one at a time (each goes into the fake Slack as
    it is made, so a history read never sees messages not sent yet); authors take turns."""
    rng = random.Random(seed)
    for number in itertools.count():
        label = texts.tag(0, number)
        user = users[number % len(users)]
        event = mention(slack, texts.user_text(rng, label), thread_ts=thread_ts, user=user)
        yield Mention(label, thread_ts, event)


def replies(slack: FakeSlack) -> dict[str, list[str]]:
    """For each label, the thread of every chat.postMessage that answered it."""
    found: dict[str, list[str]] = {}
    for call in slack.calls_to("chat.postMessage"):
        for label in texts.tags_in(call.params.get("text", "")):
            found.setdefault(label, []).append(call.params.get("thread_ts", ""))
    return found


def answered_once(slack: FakeSlack, made: list[Mention]) -> int:
    """How many mentions were answered by exactly one reply, posted in their own thread."""
    found = replies(slack)
    return sum(1 for m in made if found.get(m.label) == [m.thread_ts])


def wait_answered(
    slack: FakeSlack, model: AnsweringModel, made: list[Mention], timeout: float
) -> None:
    """Until every mention has been answered in Slack and every run has ended (its :eyes:
    reaction removed).

    The wait is on the model first (cheap, while the load runs): once it has named every
    label in a reply, no run is left with anything to answer; then on the fake Slack for the
    posts those runs still owe, and for no message left with the reaction.
    """
    deadline = time.monotonic() + timeout
    labels = {m.label for m in made}
    model.wait_answered(labels, timeout)
    # Each label in a post (one post may answer several), not as many posts as the model's
    # decisions: a decision whose run was cut short (its lease lost) is made again by the
    # run that resumes the thread, and posted once.
    for label in labels - set(replies(slack)):

        def answered(call: Call, label: str = label) -> bool:
            return label in texts.tags_in(call.params.get("text", ""))

        slack.wait_for_call(
            "chat.postMessage", timeout=max(0.0, deadline - time.monotonic()), where=answered
        )
    slack.wait_reaction_gone(PROGRESS_REACTION, timeout=max(0.0, deadline - time.monotonic()))


def per_method(slack: FakeSlack) -> Counter[str]:
    return Counter(call.method for call in slack.calls)


def recorded_once(database_url: str, made: list[Mention]) -> int:
    """Mentions whose label is in exactly one user entry of their own thread's log."""
    store = open_store(database_url)
    try:
        counts: Counter[tuple[str, str]] = Counter()
        for summary in store.threads():
            for entry in store.entries(summary.key):
                if entry.role == "user":
                    for label in texts.tags_in(entry.content.text):
                        counts[(summary.key.thread_ts, label)] += 1
    finally:
        store.close()
    return sum(1 for m in made if counts[(m.thread_ts, m.label)] == 1)


def valid_logs(database_url: str) -> tuple[int, int]:
    """How many thread logs pass the validator as they export, of how many."""
    store = open_store(database_url)
    try:
        logs = [store.entries(summary.key) for summary in store.threads()]
    finally:
        store.close()
    valid = sum(
        1
        for log in logs
        if not validate_log("[" + ",".join(e.canonical_json() for e in log) + "]").problems
    )
    return valid, len(logs)


@dataclass(frozen=True)
class PlanningThread:
    """The app against the fakes, with a channel thread already begun by two people."""

    slack: FakeSlack
    model: FakeOpenAI
    app: RunningApp
    thread_ts: str
    mentions: Iterator[Mention]  # the thread's next mentions, endlessly


@contextmanager
def planning_thread(model: AnsweringModel) -> Iterator[PlanningThread]:
    """The thread the economy and cost benchmarks answer mentions in, one after another."""
    with (
        FakeSlack() as slack,
        FakeOpenAI(default=model) as fake,
        tempfile.TemporaryDirectory() as workdir,
    ):
        parent = slack.add_message(ids.CHANNEL_ID, text="Planning thread for the offsite 🧵")
        slack.add_message(ids.CHANNEL_ID, text="Budget is in the sheet.", thread_ts=parent["ts"])
        url = f"sqlite:///{Path(workdir) / 'app.db'}"
        app = RunningApp(app_settings(slack, fake, url)).start()
        try:
            users = (ids.USER_ID, ids.USER_ID, "U0FAKEUSR2")
            made = thread_mentions(slack, parent["ts"], users)
            yield PlanningThread(slack, fake, app, parent["ts"], made)
        finally:
            app.stop()
