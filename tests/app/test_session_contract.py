"""Slack's 2026-08-20 contract for agents (issue 37): where the workspace takes agent sessions,
every status and title goes through `agents.sessions.*` and nothing calls the older
`assistant.threads.setStatus`/`setTitle` (which the fake refuses there as Slack's bridge does
for free text); a title a person gives a session is kept and never renamed over; the legacy
assistant view is announced once per process."""

from __future__ import annotations

import logging
import time

import pytest

from assistant.fakes import ids
from assistant.fakes.events import builders as events
from assistant.fakes.events.panel import context_changed, open_panel, title_changed
from assistant.fakes.openai import responses as replies
from assistant.fakes.requests import event_callback
from assistant.panel import legacy_view
from context.storage import ThreadKey
from tests.harness import mention, script_answers, seed, thread_of, wait_session

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

LEGACY = "assistant.panel.legacy_view"


def panel_key(started: dict) -> ThreadKey:
    thread = started["assistant_thread"]
    return ThreadKey(ids.TEAM_ID, thread["channel_id"], thread["thread_ts"])


def contents(app, key: ThreadKey) -> list:
    return [entry["content"] for entry in app.log(key)]


def test_a_panel_thread_of_an_agent_is_titled_and_shown_by_its_session(app, slack, model):
    slack.agents.agent = True
    started = open_panel(slack)
    assert app.send_event(started).status == 200
    app.wait_handled()
    key = panel_key(started)
    script_answers(model)
    message = seed(slack, events.dm("Where do we eat on Friday?", thread_ts=key.thread_ts))
    assert app.send_event(message).status == 200
    slack.wait_for_call(
        "agents.sessions.setStatus",
        where=lambda c: (
            c.params.get("thread_ts") == key.thread_ts and c.params["status"] == "active"
        ),
    )
    app.wait_idle()

    session = slack.agents.session(key.channel, key.thread_ts)
    assert session.title == "Where do we eat on Friday?"  # the panel's title, at creation
    assert session.statuses[0] == "processing" and session.statuses[-1] == "active"
    # Nothing through the older methods: no "is thinking…" status, no setTitle.
    assert not slack.calls_to("assistant.threads.setStatus")
    assert not slack.calls_to("assistant.threads.setTitle")
    assert 'The conversation was titled "Where do we eat on Friday?".' in contents(app, key)


def test_a_persons_title_is_kept_and_never_renamed_over(app, slack, model):
    slack.agents.agent = True
    script_answers(model, 2)
    first = mention(slack, "lunch?")
    assert app.send_event(first).status == 200
    wait_session(slack, first, "active")
    app.wait_idle()

    previous = slack.agents.rename_by_person(first["channel"], first["ts"], "Team lunch")
    renamed = title_changed(first["channel"], first["ts"], "Team lunch", previous)
    payload = event_callback(renamed)
    assert app.send_event(renamed, payload=payload).status == 200
    assert app.send_event(renamed, payload=payload, retry_num=1).status == 200  # Slack's retry
    app.wait_handled()
    key = thread_of(first)
    said = [c for c in contents(app, key) if isinstance(c, str) and "renamed" in c]
    assert said == [
        f'<@{ids.USER_ID}> renamed the conversation "Team lunch" (it was "lunch?"); '
        "the app keeps that title."
    ]
    assert app.assistant.store.session_title(key) == "Team lunch"

    again = mention(slack, "and tomorrow?", thread_ts=first["ts"])
    assert app.send_event(again).status == 200
    wait_session(slack, first, "active", count=2)
    app.wait_idle()
    session = slack.agents.session(first["channel"], first["ts"])
    assert session.title == "Team lunch" and session.renames == []


def test_a_title_change_for_a_thread_the_app_never_saw_records_nothing(app, slack):
    root = slack.add_message(ids.CHANNEL_ID, text="not ours")["ts"]
    event = {
        "type": "agent_session_title_changed",
        "channel": ids.CHANNEL_ID,
        "thread_ts": root,
        "title": "Whatever",
        "user": ids.USER_ID,
        "event_ts": root,
    }
    assert app.send_event(event).status == 200
    app.wait_handled()
    assert app.log(ThreadKey(ids.TEAM_ID, ids.CHANNEL_ID, root)) == []


def test_the_legacy_view_is_announced_once_per_process(app, slack, caplog):
    caplog.set_level(logging.WARNING, logger=LEGACY)
    legacy_view._warned.clear()  # a fresh process's
    started = open_panel(slack)
    for event in (
        started,
        context_changed(thread_ts=started["assistant_thread"]["thread_ts"], viewing="C0OTHER1"),
    ):
        assert app.send_event(event).status == 200
        app.wait_handled()
    lines = [r.getMessage() for r in caplog.records if r.name == LEGACY]
    assert len(lines) == 1
    assert "assistant_thread_started" in lines[0] and "February 2027" in lines[0]


def test_a_manifest_declaring_the_assistant_view_is_announced(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger=LEGACY)
    legacy_view._warned.clear()
    old = tmp_path / "manifest.yml"
    old.write_text("features:\n  assistant_view:\n    assistant_description: hi\n")
    new = tmp_path / "agent.yml"
    new.write_text("features:\n  agent_view:\n    agent_description: hi\n")
    legacy_view.check_manifest(new)
    assert not [r for r in caplog.records if r.name == LEGACY]
    legacy_view.check_manifest(old)
    legacy_view.check_manifest(old)
    lines = [r.getMessage() for r in caplog.records if r.name == LEGACY]
    assert len(lines) == 1 and "'assistant_view' in manifest.yml" in lines[0]


def test_where_sessions_are_refused_the_panel_falls_back_to_the_older_methods(app, slack, model):
    started = open_panel(slack)
    assert app.send_event(started).status == 200
    app.wait_handled()
    key = panel_key(started)
    model.script(replies.tool_calls(("postMessage", {"text": "Risotto", "reasoning": "a"})))
    model.script(replies.finish_request())
    message = seed(slack, events.dm("Dinner ideas?", thread_ts=key.thread_ts))
    assert app.send_event(message).status == 200
    app.wait_handled()
    slack.wait_for_call("assistant.threads.setStatus", count=2)
    app.wait_idle()
    assert slack.assistant_threads.title(key.channel, key.thread_ts) == "Dinner ideas?"
    statuses = [c.params["status"] for c in slack.calls_to("assistant.threads.setStatus")]
    assert statuses == ["is thinking…", ""]


# -- every way out of a run leaves the session out of `processing` ---------------------------


def ends_out_of_processing(slack, event) -> list[str]:
    session = slack.agents.session(event["channel"], event["ts"])
    assert session is not None and session.statuses[0] == "processing"
    assert session.status != "processing", session.statuses
    return session.statuses


def test_every_way_out_of_a_run_leaves_processing(make_app, slack, model):
    """Answered, failed, stopped, deferred by an outage, handed to another process: after
    each, the thread's session in the fake Slack is no longer `processing`."""
    slack.agents.agent = True
    app = make_app(assistant_run_lease_seconds=2)

    # Answered.
    script_answers(model)
    answered = mention(slack, "lunch?")
    assert app.send_event(answered).status == 200
    wait_session(slack, answered, "active")
    app.wait_idle()
    ends_out_of_processing(slack, answered)

    # Failed: the model's error ends it with an apology.
    model.script(replies.error(500))
    failed = mention(slack, "and dinner?")
    assert app.send_event(failed).status == 200
    wait_session(slack, failed, "active")
    app.wait_idle()
    ends_out_of_processing(slack, failed)

    # Stopped: the stop button pressed while the model thinks.
    held = replies.hold(replies.tool_calls(("finishRequest", {"reasoning": "late"})))
    model.script(held)
    stopped = mention(slack, "think hard about lunch")
    assert app.send_event(stopped).status == 200
    held.wait_reached()
    assert app.send_event(slack.agents.press_stop(stopped["channel"], stopped["ts"])).status == 200
    wait_session(slack, stopped, "active")
    held.release()
    app.wait_idle()
    ends_out_of_processing(slack, stopped)

    # Deferred: Slack fails the post in a way that may pass; the request stays owed.
    model.script(
        replies.tool_calls(
            ("postMessage", {"text": "Seen.", "reasoning": "answer"}),
            ("finishRequest", {"reasoning": "done"}),
        )
    )
    end = slack.outage("chat.postMessage")
    deferred = mention(slack, "the report, please")
    assert app.send_event(deferred).status == 200
    wait_session(slack, deferred, "active", timeout=90)
    assert app.assistant.store.pending(thread_of(deferred))
    ends_out_of_processing(slack, deferred)
    end()
    model.script(replies.tool_calls(("finishRequest", {"reasoning": "done"})))
    wait_session(slack, deferred, "active", count=2, timeout=90)
    app.wait_idle()
    ends_out_of_processing(slack, deferred)

    # Handed to another process: the lease lapses while the run stalls; another holder took it.
    store, agent = app.assistant.store, app.agent()
    post_message = agent.tools["postMessage"]

    async def stalled_post(call, ctx, index):
        time.sleep(2.5)  # blocks the event loop past the lease: a stalled process
        assert store.claim(ctx.key, "another-process", 3600)
        return await post_message(call, ctx, index)

    agent.tools["postMessage"] = stalled_post
    model.script(
        replies.tool_calls(
            ("postMessage", {"text": "too late", "reasoning": "answer"}),
            ("finishRequest", {"reasoning": "done"}),
        )
    )
    handed = mention(slack, "where do we eat?")
    assert app.send_event(handed).status == 200
    wait_session(slack, handed, "active")
    app.wait_idle()
    agent.tools["postMessage"] = post_message
    assert [p.index for p in store.pending(thread_of(handed))]  # owed, the new holder's
    ends_out_of_processing(slack, handed)


def test_a_malformed_title_change_is_acknowledged_and_records_nothing(app, slack, model, caplog):
    caplog.set_level(logging.WARNING, logger="assistant.intake.event_shapes")
    slack.agents.agent = True
    script_answers(model)
    first = mention(slack, "lunch?")
    assert app.send_event(first).status == 200
    wait_session(slack, first, "active")
    app.wait_idle()
    before = app.log(thread_of(first))
    for bad in ({"title": 5}, {"title": "x" * 201}, {"thread_ts": "yesterday"}):
        event = {**title_changed(first["channel"], first["ts"], "New"), **bad}
        assert app.send_event(event).status == 200
        app.wait_handled()
    assert app.log(thread_of(first)) == before
    lines = [
        r.getMessage() for r in caplog.records if "agent_session_title_changed" in r.getMessage()
    ]
    assert len(lines) == 3 and all("not recorded" in line for line in lines)
    assert app.assistant.store.session_title(thread_of(first)) is None
