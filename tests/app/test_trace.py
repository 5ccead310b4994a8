"""The live trace of a process that answers several threads at once: a header line names the
thread whenever the next entry belongs to another one; `ASSISTANT_TRACE=json` writes one JSON
object per entry per line; `off` writes nothing. End to end through the app's Bolt app."""

from __future__ import annotations

import asyncio
import io
import json
import re
from dataclasses import asdict

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from assistant.slack.channel_names import ChannelNames
from assistant.slack.workspaces import Workspaces
from context.canonical import load_log
from context.entry import UserContent, make_entry
from context.render import render_log
from context.storage import EntryMeta, ThreadKey
from context.trace import JsonTrace, TraceWriter, thread_header
from tests.cli import DATA
from tests.harness import mention as say
from tests.harness import thread_of

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

HEADER = re.compile(r"^🧵 (\S+)(?: \((.+)\))?$")


def answer_each_thread(body: dict) -> replies.Completion:
    """Whatever thread asks: answer its newest message once, then finish."""
    log = json.loads(body["messages"][1]["content"])
    if log[-1]["role"] == "assistant" and log[-1]["content"]["toolCall"] == "postMessage":
        return replies.finish_request()
    asked = next(e for e in reversed(log) if e["role"] == "user")
    text = f"Answer to {asked['content']['text']}"
    return replies.tool_calls(("postMessage", {"text": text, "reasoning": "answer"}))


def segments(trace: str) -> list[tuple[str | None, str]]:
    """The trace cut at its header lines: (the header's thread, or None before the first
    header; the blocks under it, as printed)."""
    found: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in trace.splitlines(keepends=True):
        header = HEADER.match(line.rstrip("\n"))
        if header:
            found.append((header.group(1), []))
        else:
            found[-1][1].append(line)
    return [(key, "".join(lines)) for key, lines in found if key or lines]


def blocks(text: str) -> list[str]:
    return [block for block in text.strip("\n").split("\n\n") if block]


def test_two_threads_answered_at_once_are_told_apart_by_headers(make_app, slack, model):
    app = make_app()
    model.default = answer_each_thread
    held = replies.hold()  # the first thread's first model call waits
    model.script(held)
    first = say(slack, "first question")
    app.send_event(first)
    held.wait_reached()
    second = say(slack, "second question")
    app.send_event(second)
    slack.wait_for_call("reactions.remove")  # the second thread is answered meanwhile
    # Its header asked Slack for the channel's name; the next header can show it.
    asyncio.run_coroutine_threadsafe(app.assistant.channel_names.settle(), app._loop).result(15)
    held.release()
    slack.wait_for_call("reactions.remove", count=2)
    app.wait_idle()

    a, b = thread_of(first), thread_of(second)
    trace = app.trace.getvalue()
    cut = segments(trace)
    # The first entries have no header (a one-thread trace has none); then one header at
    # each switch, naming the thread; the channel's name once Slack has told it.
    assert [key for key, _ in cut] == [None, str(b), str(a)]
    headers = [line for line in trace.splitlines() if line.startswith("🧵")]
    assert headers == [thread_header(b), thread_header(a, "#general")]
    # Under each header, only that thread's entries; together, each thread's whole trace.
    of_a = blocks(cut[0][1]) + blocks(cut[2][1])
    assert of_a == blocks(render_log(app.assistant.store.entries(a)))
    assert blocks(cut[1][1]) == blocks(render_log(app.assistant.store.entries(b)))
    assert "Answer to second question" in cut[1][1] and "first" not in cut[1][1]
    # Blocks stay separated by one blank line, headers included.
    assert "\n\n\n" not in trace
    assert f"finishRequest\n   └─ Reason: Done.\n\n{headers[1]}\n🤖 Assistant" in trace


def test_json_trace_writes_one_parsable_line_per_entry_with_its_thread(make_app, slack, model):
    app = make_app(assistant_trace="json")
    model.default = answer_each_thread
    events = [say(slack, "first question"), say(slack, "second question")]
    for event in events:
        app.send_event(event)
    slack.wait_for_call("reactions.remove", count=2)
    app.wait_idle()

    lines = app.trace.getvalue().splitlines()
    parsed = [json.loads(line) for line in lines]
    keys = [thread_of(event) for event in events]
    for key in keys:
        mine = [line for line in parsed if line["thread"] == str(key)]
        # Every entry of the thread, in its canonical form, in order.
        assert [line["entry"] for line in mine] == [
            e.as_dict() for e in app.assistant.store.entries(key)
        ]
        # Side metadata as stored when the entry was recorded: the message's Slack ts and
        # event id, the model's usage on its reply (a reply's own ts comes once posted).
        # (Every field but the secret ones: Slack's action token is never printed.)
        stored = [meta.shown() for meta in app.assistant.store.metadata(key)]
        for line, meta in zip(mine, stored, strict=True):
            assert line["meta"].keys() == meta.keys()
            for name in ("event_id", "model", "prompt_tokens", "completion_tokens"):
                assert line["meta"][name] == meta[name], name
            if line["entry"]["role"] == "user":
                assert line["meta"]["slack_ts"] == meta["slack_ts"]
        assert mine[1]["meta"]["slack_ts"] and mine[1]["meta"]["wants_answer"] is True
        assert mine[2]["meta"]["model"] == "gpt-4o-mini" and mine[2]["meta"]["prompt_tokens"]
    assert len(parsed) == sum(len(app.assistant.store.entries(k)) for k in keys)
    assert not any(line.startswith("🧵") for line in lines)


def test_trace_off_prints_nothing_and_the_store_keeps_everything(make_app, slack, model):
    app = make_app(assistant_trace="off")
    model.default = answer_each_thread
    event = say(slack, "quiet please")
    app.send_event(event)
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    assert app.trace.getvalue() == ""
    assert len(app.log(thread_of(event))) == 4


def test_one_thread_is_the_golden_trace_and_headers_come_only_on_a_switch():
    seed = load_log((DATA / "aya-lunch.json").read_bytes()).entries
    key, other = ThreadKey("T1", "C1", "1.0"), ThreadKey("T1", "C2", "2.0")
    one = io.StringIO()
    writer = TraceWriter(one, names=lambda k: "#lunch")
    for entry in seed:
        writer.write(entry, key, EntryMeta())
    assert one.getvalue() == (DATA / "aya-lunch.console.txt").read_text(encoding="utf-8")

    two = io.StringIO()
    writer = TraceWriter(two, names={key: "#lunch"}.get)
    for entry, thread in zip(seed, [key, other, other, key], strict=True):
        writer.write(entry, thread)
    assert [line for line in two.getvalue().splitlines() if line.startswith("🧵")] == [
        "🧵 T1/C2/2.0",
        "🧵 T1/C1/1.0 (#lunch)",
    ]
    # A replay of several logs names each, the first too.
    first = io.StringIO()
    TraceWriter(first, header_first=True).write(seed[0], key)
    assert first.getvalue().startswith("🧵 T1/C1/1.0\n🧠 System:")


def test_json_lines_escape_line_breaks_and_control_characters():
    text = "two\nlines and a bell \x07"
    entry = make_entry(1, 0, "2025-04-04T12:33:00Z", UserContent(userid="<@U1>", text=text))
    stream = io.StringIO()
    JsonTrace(stream, names=lambda key: "#general").write(entry, ThreadKey("T", "C", "1"))
    line = stream.getvalue()
    assert line.count("\n") == 1 and "\x07" not in line
    parsed = json.loads(line)
    assert parsed["thread"] == "T/C/1" and parsed["name"] == "#general"
    assert parsed["entry"]["content"]["text"] == text
    assert parsed["meta"] == EntryMeta().shown()
    assert "action_token" not in parsed["meta"] and "action_token" in asdict(EntryMeta())


async def test_channel_names_are_asked_of_slack_once_and_a_refusal_leaves_the_id(slack):
    client = AsyncWebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)
    names = ChannelNames(Workspaces(slack.api_url, single=client).client)
    general = ThreadKey(ids.TEAM_ID, ids.CHANNEL_ID, "1.0")
    dm = ThreadKey(ids.TEAM_ID, ids.DM_CHANNEL_ID, "2.0")
    hidden = ThreadKey(ids.TEAM_ID, "C0HIDDEN01", "3.0")  # Slack answers channel_not_found
    try:
        # Never waits for Slack: unknown until the answer comes.
        assert [names(general), names(dm), names(hidden)] == [None, None, None]
        await names.settle()
        assert names(general) == "#general"
        assert names(ThreadKey(ids.TEAM_ID, ids.CHANNEL_ID, "9.0")) == "#general"
        assert names(dm) == f"DM with <@{ids.USER_ID}>"
        assert names(hidden) is None
        await names.settle()
        asked = [call.params["channel"] for call in slack.calls_to("conversations.info")]
        assert sorted(asked) == sorted([ids.CHANNEL_ID, ids.DM_CHANNEL_ID, "C0HIDDEN01"])
    finally:
        await names.close()


def test_a_header_cannot_carry_terminal_controls():
    """A channel's name comes from Slack, a replayed file's name from the command line."""
    header = thread_header(ThreadKey("T1", "C1", "1.2"), "#evil\x1b]8;;http://x\x07\u202e")
    assert "\x1b" not in header and "\x07" not in header and "\u202e" not in header
    assert header.startswith("🧵 T1/C1/1.2 (#evil")
