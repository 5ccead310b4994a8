"""The real `assistant serve` against llama.cpp's `llama-server` and SmolLM2-135M-Instruct
(issue 35): what the fakes of assistant/fakes/openai play, a real server does. Nothing here is
about what the tiny model says: every event is accepted, every mention's run ended once, every
log valid, each thread showing exactly what its log says was shown, each once; every
mention answered (a post; or an apology: the step cap's, or that of a model that would not
answer after being asked once); and the constrained mode, which the
start's model check finds this server needs, produces tool calls that the log records."""

from __future__ import annotations

import http.client
import json
import re
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assistant.fakes import FakeSlack, ids
from assistant.fakes.requests import event_callback, signed_event_request
from assistant.run.core.leftovers import NOTICE_EVENT, NOTICE_METADATA, POST_EVENT
from assistant.run.loop.answer_so_far import NO_ANSWER, NOT_FINISHED
from assistant.run.progress.step_cards import STEPS_METADATA
from context.storage import ThreadKey, open_store
from context.validate import validate_log
from tests.harness import mention, thread_of
from tests.process import TIMEOUT, AssistantProcess, clean_env
from tests.processes.test_socket_mode import free_port
from tests.real_model.conftest import LlamaServer

# A model on one thread of a loaded 2-core machine: a run may take minutes; the test ends
# when the runs do, so the bound only has to be generous.
RUN_TIMEOUT = 1500.0
pytestmark = [pytest.mark.real_model, pytest.mark.timeout(3600)]

SWITCHED_TO_JSON = "asking that model for its tool calls as JSON (response_format)"
STOPPED_STREAMING = "asking for whole answers from that model from now on"
PLAIN_TEXT = "The model answered in plain text instead of calling a tool"
STEP_CAP = "Error: stopped after {steps} steps without finishRequest"
STEPS = 4  # ASSISTANT_MAX_STEPS: a run that never finishes ends sooner
APOLOGY = NOTICE_METADATA["event_payload"]
STEPS_SHOWN = STEPS_METADATA["event_payload"]


@dataclass
class Conversation:
    statuses: list[int]
    stderr: str
    logs: dict[ThreadKey, list[dict[str, Any]]]
    mentions: dict[ThreadKey, int]  # how many mentions each thread had


def post_event(port: int, event: dict[str, Any]) -> int:
    body, headers = signed_event_request(event_callback(event))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        connection.request("POST", "/slack/events", body=body, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


def converse(
    slack: FakeSlack,
    llama: LlamaServer,
    tmp_path: Path,
    threads: int,
    follow_ups: int,
    ready: str = r"Uvicorn running on",
    **settings: str,
) -> Conversation:
    """`assistant serve` with the model at `llama`: once its stderr shows `ready`, `threads`
    mentions in threads of their own, all at once; once each is answered, `follow_ups` of them
    are mentioned again in their thread. Stopped (SIGTERM) once every run has ended."""
    port = free_port()
    database = f"sqlite:///{tmp_path / 'app.db'}"
    env = clean_env(
        SLACK_BOT_TOKEN=ids.BOT_TOKEN,
        SLACK_SIGNING_SECRET=ids.SIGNING_SECRET,
        SLACK_API_URL=slack.api_url,
        OPENAI_API_KEY=ids.OPENAI_API_KEY,
        OPENAI_BASE_URL=llama.base_url,
        OPENAI_TIMEOUT=str(RUN_TIMEOUT),
        OPENAI_MAX_RETRIES="0",
        DATABASE_URL=database,
        PORT=str(port),
        ASSISTANT_MODEL="smollm2",
        # llama-server's -c 8192, about 10% below (docs/model-servers.md).
        ASSISTANT_CONTEXT_TOKENS="7300",
        ASSISTANT_ANSWER_TOKENS="256",
        ASSISTANT_MAX_STEPS=str(STEPS),
        **settings,
    )
    statuses: list[int] = []
    with AssistantProcess("serve", "--host", "127.0.0.1", env=env, cwd=tmp_path) as app:
        app.stderr.wait_for(ready, timeout=RUN_TIMEOUT)
        firsts = [mention(slack, f"question {n}: what is a thread?") for n in range(threads)]
        statuses += [post_event(port, event) for event in firsts]
        wait_ended(slack, firsts)
        seconds = [
            mention(slack, "and why?", thread_ts=event["ts"]) for event in firsts[:follow_ups]
        ]
        statuses += [post_event(port, event) for event in seconds]
        wait_ended(slack, seconds)
        code = app.stop(signal.SIGTERM, timeout=RUN_TIMEOUT)
    assert code == 0, app.stderr.text
    store = open_store(database)
    try:
        mentions = {thread_of(event): 1 for event in firsts}
        for event in seconds:
            mentions[thread_of(event)] += 1
        logs = {key: [e.as_dict() for e in store.entries(key)] for key in mentions}
    finally:
        store.close()
    return Conversation(statuses, app.stderr.text, logs, mentions)


def wait_ended(slack: FakeSlack, events: Sequence[dict[str, Any]]) -> None:
    """Until the run answering each of `events` has ended: its progress reaction is taken
    off the message when the run ends, however it ends."""
    for event in events:
        slack.wait_for_call(
            "reactions.remove",
            timeout=RUN_TIMEOUT,
            where=lambda c, ts=event["ts"]: c.params.get("timestamp") == ts,
        )


def bot_replies(slack: FakeSlack, key: ThreadKey) -> list[dict[str, Any]]:
    return [m for m in slack.thread(key.channel, key.thread_ts)[1:] if m.get("bot_id")]


def tool_calls(log: list[dict[str, Any]]) -> list[str]:
    return [e["content"]["toolCall"] for e in log if e["role"] == "assistant"]


def calls_recorded(log: list[dict[str, Any]]) -> list[str]:
    """The model's tool calls as the log records them: its assistant entries, and the
    finishRequests refused as coming before any post (NOT_FINISHED took their place)."""
    refused = [
        "finishRequest" for e in log if e["role"] == "system" and e["content"] == NOT_FINISHED
    ]
    return tool_calls(log) + refused


def run_ends(log: list[dict[str, Any]]) -> list[int]:
    """The indexes of the entries that end a run: finishRequest, the step cap's entry, or
    the apology of a model that would not answer."""
    ends = (STEP_CAP.format(steps=STEPS), f"Error: {NO_ANSWER}")
    return [
        e["index"]
        for e in log
        if (e["role"] == "assistant" and e["content"]["toolCall"] == "finishRequest")
        or (e["role"] == "system" and str(e["content"]).startswith(ends))
    ]


def posts_to_show(log: list[dict[str, Any]]) -> set[int]:
    """The log's postMessage entries that were to reach Slack: all but those an `Error:`
    entry says were not carried out or not posted (over the caps, nothing visible)."""
    errors = [
        e["content"] for e in log if e["role"] == "system" and e["content"].startswith("Error:")
    ]
    return {
        e["index"]
        for e in log
        if e["role"] == "assistant" and e["content"]["toolCall"] == "postMessage"
        and not any(f"entry {e['index']} " in error for error in errors)
    }  # fmt: skip


def assert_shown_as_logged(
    slack: FakeSlack, key: ThreadKey, log: list[dict[str, Any]], runs: int
) -> None:
    """The bot's messages in the thread are exactly what its log says was shown, each once:
    every postMessage carried out, every apology the log says the thread was told, and at
    most one message of step cards a run (docs/slack-features.md; a post or an apology may
    end up in it, with its metadata)."""
    messages = bot_replies(slack, key)
    shown = json.dumps([(m["text"], m.get("metadata")) for m in messages], indent=1)
    metadata = [m.get("metadata") or {} for m in messages]
    assert {m.get("event_type") for m in metadata} <= {POST_EVENT, NOTICE_EVENT}, shown
    parts = [
        (m["event_payload"]["entry"], m["event_payload"]["part"])
        for m in metadata
        if m["event_type"] == POST_EVENT
    ]
    assert len(parts) == len(set(parts)), shown  # no part of a post twice
    assert {entry for entry, _ in parts} == posts_to_show(log), shown
    notices = [m["event_payload"] for m in metadata if m["event_type"] == NOTICE_EVENT]
    told = [e for e in log if e["role"] == "system" and "The user was told" in e["content"]]
    assert notices.count(APOLOGY) == len(told), shown
    assert notices.count(STEPS_SHOWN) <= runs, shown
    assert len(notices) == notices.count(APOLOGY) + notices.count(STEPS_SHOWN), shown


def unanswered_runs(log: list[dict[str, Any]]) -> list[int]:
    """The ends of the runs that showed the person nothing: no post of theirs reached Slack
    and no apology was told."""
    shown, told = posts_to_show(log), told_ends(log)
    starts = [0, *(end + 1 for end in run_ends(log))]
    return [
        end
        for start, end in zip(starts, run_ends(log), strict=False)
        if end not in told and not any(start <= index < end for index in shown)
    ]


def repeated_posts(log: list[dict[str, Any]]) -> list[str]:
    """The texts a run showed more than once (its posts that reached Slack, stripped)."""
    shown, starts = posts_to_show(log), [0, *(end + 1 for end in run_ends(log))]
    repeated = []
    for start, end in zip(starts, run_ends(log), strict=False):
        texts = [
            e["content"]["text"].strip() for e in log[start:end] if e["index"] in shown
        ]  # fmt: skip
        repeated += [text for n, text in enumerate(texts) if text in texts[:n]]
    return repeated


def told_ends(log: list[dict[str, Any]]) -> set[int]:
    """The entries that end a run and say what the person was told (an apology)."""
    return {
        e["index"] for e in log if e["role"] == "system" and "The user was told" in e["content"]
    }


def assert_every_run_ended_and_shown_once(slack: FakeSlack, talk: Conversation) -> None:
    assert set(talk.statuses) == {200}, talk.statuses
    assert "Traceback" not in talk.stderr
    for key, log in talk.logs.items():
        told = f"{key}: {json.dumps(log, indent=1)}"
        ends = run_ends(log)
        assert len(ends) == talk.mentions[key], told  # each mention's run ended, once
        assert ends[-1] == log[-1]["index"], told  # nothing after the last run's end
        # Each mention answered: a model that ends without posting is told once to answer
        # first (assistant.run.loop.answer_so_far.NOT_FINISHED); if it insists, the person
        # gets the apology.
        assert unanswered_runs(log) == [], told
        assert repeated_posts(log) == [], told  # and once: no text posted twice in a run
        assert validate_log(json.dumps(log)).problems == [], told
        assert_shown_as_logged(slack, key, log, talk.mentions[key])


def test_the_constrained_mode_ends_every_run_and_shows_it_once(slack, llama_server, tmp_path):
    """Tool mode auto, as the bot runs by default: the model check at start finds that
    SmolLM2's template leaves tool_choice "required" unenforced, and the runs ask for their
    tool calls as JSON (response_format), which llama-server holds to by a grammar (streamed
    as llama-server streams it). The mentions come once the check has switched (a mention
    during the check is asked with tools, and answered in plain text)."""
    talk = converse(
        slack, llama_server, tmp_path, threads=3, follow_ups=1, ready=re.escape(SWITCHED_TO_JSON),
        ASSISTANT_MODEL_CHECK="on", ASSISTANT_STREAM="auto",
    )  # fmt: skip
    assert_every_run_ended_and_shown_once(slack, talk)
    assert SWITCHED_TO_JSON in talk.stderr
    # Every thread's model made tool calls, and the log records them: as assistant entries,
    # or, for a finishRequest before any post, as the note that took its place.
    assert all(calls_recorded(log) for log in talk.logs.values()), talk.logs
    # Held to the schema by the grammar: never the plain text the tools mode got.
    assert not any(PLAIN_TEXT in str(e["content"]) for log in talk.logs.values() for e in log)


def test_streamed_answers_with_tools_end_every_run_and_show_it_once(slack, llama_server, tmp_path):
    """Tool mode tools, answers streamed: the model's answer is asked for, and comes,
    streamed (a server that answered a stream whole, or refused it, is asked for whole answers
    from then on, which the console says). What reaches Slack depends on the model: a
    postMessage call is streamed into Slack as it is written; plain text, which SmolLM2 writes
    where llama-server leaves tool_choice unenforced, is posted whole."""
    talk = converse(
        slack, llama_server, tmp_path, threads=1, follow_ups=0,
        ASSISTANT_MODEL_CHECK="off", ASSISTANT_STREAM="auto", ASSISTANT_TOOL_MODE="tools",
    )  # fmt: skip
    assert_every_run_ended_and_shown_once(slack, talk)
    assert SWITCHED_TO_JSON not in talk.stderr
    assert STOPPED_STREAMING not in talk.stderr
