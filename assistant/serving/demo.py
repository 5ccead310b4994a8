"""`assistant demo`: the bot at work without Slack or OpenAI.

The fake Slack and the fake model (`assistant/fakes/`, on loopback) stand in for the services;
the real app (Bolt, the listeners, the agent, the store) plays the conversation of
`assistant.fakes.demo`: each message goes to Bolt as Slack would send it (signed), its trace is
printed as it is recorded, and the thread stays in the store for `threads`, `show`, `export`
and `replay`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any, TextIO, cast

from slack_bolt.request.async_request import AsyncBoltRequest

from assistant.app import Assistant, create_assistant
from assistant.fakes import FakeOpenAI, FakeSlack, ids
from assistant.fakes.demo import BOB_ID, CHANNEL_NAME, CONVERSATION, DEMO_MODEL, demo_reply
from assistant.fakes.events.builders import app_mention, message
from assistant.fakes.requests import event_callback, signed_event_request
from assistant.settings.environment import Settings, load_settings
from assistant.settings.input_files import read_yaml_file
from context.entry import FAILURE_PREFIX, AssistantEntry, Entry, SystemEntry, UserEntry
from context.post_refusals import refused_posts
from context.storage import ThreadKey
from context.toolcalls import FinishRequest, PostMessage

DEMO_SERVER = "releases"  # the demo's own MCP server, assistant/fakes/mcp_release.py
RUN_TIMEOUT = 60.0  # seconds for one answer; the fakes answer in milliseconds
# With a real model (`--model-url`): a CPU model under load takes minutes for an answer of
# several calls, each bounded by OPENAI_TIMEOUT and its retries.
REAL_RUN_TIMEOUT = 1800.0


class DemoError(Exception):
    """The demo could not play its conversation to the end: what went wrong."""


@dataclass(frozen=True)
class RealModel:
    """A model server of the person's own (`assistant demo --model-url URL --model NAME`)."""

    url: str
    name: str
    api_key: str  # OPENAI_API_KEY when set, else a placeholder: local servers take any


@dataclass(frozen=True)
class Played:
    thread: ThreadKey
    # The people's messages answered: the model's post reached the thread (a run may still
    # have ended early after it: `cut_short`).
    answers: int
    # Why each message that got no post of the model got an apology instead: the `Error:`
    # entry that ended its run (docs/log-format.md#how-a-run-ends), or that nothing answered it.
    failures: tuple[str, ...] = ()
    # Why each answered message's run ended early, after its post (the step cap, say).
    cut_short: tuple[str, ...] = ()


# What an `Error:` entry that ends a run says of the thread after its reason
# (docs/log-format.md#how-a-run-ends); an `Error:` entry of one call says none of these.
ENDINGS = (" The user was told", " The thread could not be told", " No one was told")


def answered(entries: Sequence[Entry]) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """How the people's messages of a log were answered: the number whose answer showed a
    post of the model, why each other one was not, and why each answered one ended early. A
    message's answer is what the log holds after it, up to the next person's message."""
    answers: list[list[Entry]] = []
    for entry in entries:
        if isinstance(entry, UserEntry):
            answers.append([])
        elif answers:
            answers[-1].append(entry)
    shown, failures, cut_short = 0, [], []
    for answer in answers:
        refused = refused_posts(answer)
        posted = any(
            isinstance(e, AssistantEntry)
            and isinstance(e.content, PostMessage)
            and e.index not in refused
            for e in answer
        )
        errors = [
            e.content
            for e in answer
            if isinstance(e, SystemEntry)
            and e.content.startswith(FAILURE_PREFIX)
            and any(told in e.content for told in ENDINGS)
        ]
        ended = errors and not any(isinstance(e.content, FinishRequest) for e in answer)
        if posted:
            shown += 1
            if ended:
                cut_short.append(_why(errors[-1]))
        else:
            failures.append(_why(errors[-1]) if errors else "nothing answered it")
    return shown, tuple(failures), tuple(cut_short)


def _why(error: str) -> str:
    """An `Error:` entry's reason, without what the thread was told."""
    reason = error.removeprefix(FAILURE_PREFIX)
    for told in ENDINGS:
        reason = reason.split(told, 1)[0]
    return reason.rstrip(".")


def demo_settings(
    slack: FakeSlack, model: FakeOpenAI | RealModel, database_url: str, mcp_dir: Path | None = None
) -> Settings:
    """The settings of the environment (and `.env`), with Slack and the model replaced by the
    fakes (or the model by the person's own server): whatever keys are set, the demo never
    reaches the real Slack, nor OpenAI unless asked to. `mcp_dir`: where the demo's MCP file
    is written (`mcp_servers_file`): its own server and those of ASSISTANT_MCP_FILE."""
    where: dict[str, object]
    if isinstance(model, RealModel):
        # The operator's own server: their settings for it hold (ASSISTANT_MAX_STEPS among
        # them: a small model on a CPU may be given fewer).
        where = {
            "openai_base_url": model.url,
            "openai_api_key": model.api_key,
            "assistant_model": model.name,
        }
    else:
        where = {
            "openai_base_url": model.base_url,
            "openai_api_key": ids.OPENAI_API_KEY,
            "openai_max_retries": 0,
            "assistant_max_steps": 8,
            "assistant_model": DEMO_MODEL,
        }
    fixed: dict[str, Any] = {
        "database_url": database_url,
        "slack_bot_token": ids.BOT_TOKEN,
        "slack_app_token": None,
        "slack_signing_secret": ids.SIGNING_SECRET,
        "slack_api_url": slack.api_url,
        # What the conversation needs, whatever the environment says.
        "assistant_answer_followups": True,
        **where,
    }
    settings = load_settings("http", **fixed)  # ASSISTANT_MCP_FILE's servers read and checked
    if mcp_dir is None:
        return settings
    mcp_file = mcp_servers_file(mcp_dir, settings.tools.mcp_file)
    return load_settings("http", **fixed, assistant_mcp_file=mcp_file)


def mcp_servers_file(directory: Path, theirs: Path | None = None) -> Path:
    """The demo's MCP servers: `assistant.fakes.mcp_release` over stdio, by this Python (the
    scripted conversation calls its tool), and the servers of `theirs` (ASSISTANT_MCP_FILE,
    already checked), offered to the model as in a run; one of theirs named `releases`
    takes the demo's own place."""
    path = directory / "mcp.json"
    command = [sys.executable, "-m", "assistant.fakes.mcp_release"]
    servers: dict[str, object] = {DEMO_SERVER: {"command": command}}
    if theirs is not None:
        document = read_yaml_file(theirs)
        assert isinstance(document, dict)  # the settings read it as a file of servers
        servers.update(document["servers"])
    path.write_text(json.dumps({"servers": servers}))
    return path


def scripted_model() -> FakeOpenAI:
    """The demo's model, not yet started; `replay --demo-model` uses it too."""
    return FakeOpenAI(default=demo_reply)


def run_demo(database_url: str, trace: TextIO, real: RealModel | None = None) -> Played:
    """Start the fakes, play the conversation, stop; the thread is left in the store.
    `real`: the model asked instead of the scripted one."""
    # The app is an agent (manifest.yml): its fake Slack takes the agent sessions' methods,
    # as the real one does for it, rather than refusing them with a warning of its own.
    with (
        FakeSlack(agent=True) as slack,
        _model(real) as model,
        TemporaryDirectory() as directory,
    ):
        slack.add_user(BOB_ID, "bob")
        slack.conversations.public(ids.CHANNEL_ID, [ids.USER_ID, BOB_ID], name=CHANNEL_NAME)
        settings = demo_settings(slack, model, database_url, Path(directory))
        return asyncio.run(_play(settings, slack, trace, real is not None))


@contextlib.contextmanager
def _model(real: RealModel | None) -> Iterator[FakeOpenAI | RealModel]:
    if real is not None:
        yield real
        return
    with scripted_model() as model:
        yield model


async def _play(settings: Settings, slack: FakeSlack, trace: TextIO, real: bool) -> Played:
    # No resuming: this store may hold other threads owed an answer, which are not the demo's.
    assistant = create_assistant(settings, trace, resume=False)
    assert assistant.scheduler is not None  # runs=True: it runs what it records
    timeout = REAL_RUN_TIMEOUT if real else RUN_TIMEOUT
    try:
        if real:  # what the server does, said and applied before the first question
            print(await assistant.model_summary(), file=sys.stderr, flush=True)
        # Its MCP servers (ASSISTANT_MCP_FILE's among them) connected, their problems said.
        print(await assistant.mcp_summary(), file=sys.stderr, flush=True)
        parent, moment = None, 0.0
        for said in CONVERSATION:
            text = f"<@{ids.BOT_USER_ID}> {said.text}" if said.mention else said.text
            # Slack ts of the present: each demo is a new thread, its messages in the order
            # they were said (the fake's own posts take later ts, from its clock).
            moment = max(time.time(), moment + 1e-6)
            ts = f"{moment:.6f}"
            ids.clock.observe(ts)
            posted = slack.add_message(
                ids.CHANNEL_ID, ts=ts, user=said.user, text=text, thread_ts=parent
            )
            parent = parent or posted["ts"]
            thread_ts = parent if posted["ts"] != parent else None
            where = {"user": said.user, "ts": posted["ts"], "thread_ts": thread_ts}
            events = [message(text, **where)]
            if said.mention:  # Slack sends a mention twice: app_mention, and the message
                events.insert(0, app_mention(text, **where))
            for event in events:
                await _deliver(assistant, event)
            await asyncio.wait_for(assistant.scheduler.wait_idle(), timeout)
        assert parent is not None
        if assistant.judge is not None:  # ASSISTANT_JUDGE_SAMPLE: the verdicts kept before
            await asyncio.wait_for(assistant.judge.wait(), timeout)  # the app closes
        key = ThreadKey(ids.TEAM_ID, ids.CHANNEL_ID, parent)
        return Played(key, *answered(assistant.store.entries(key)))
    except TimeoutError:
        raise DemoError(f"no answer within {timeout:.0f} s") from None
    finally:
        await assistant.close()


async def _deliver(assistant: Assistant, event: dict[str, object]) -> None:
    """One event through Bolt as Slack delivers it over HTTP: signed, verified, acknowledged
    once recorded."""
    body, headers = signed_event_request(event_callback(event))
    # Bolt only reads the headers: its `dict` of `str | Sequence[str]` should be a Mapping.
    request = AsyncBoltRequest(
        body=body.decode(), headers=cast(dict[str, str | Sequence[str]], headers)
    )
    response = await assistant.app.async_dispatch(request)
    if response.status != 200:
        raise DemoError(f"the app answered HTTP {response.status} to a {event['type']} event")
