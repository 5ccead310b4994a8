"""`assistant replay` shows what Slack showed (issue 23): the thinking steps of what the log
recorded and of what it replayed, from the same function as the live task cards, so a stored
thread replays with the cards its run showed; and a thread the stop button stopped replays
saying that it was stopped, by whom and when."""

from __future__ import annotations

from datetime import UTC, datetime

from assistant.fakes import ids
from assistant.fakes._server import Hold
from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.stream import Streamed, StreamStyle
from tests.app.test_steps import HISTORY
from tests.app.test_stop_button import ANSWER, FINISH, post
from tests.commands.test_replay_report import report_lines
from tests.harness import mention as say
from tests.harness import thread_of, wait_session
from tests.process import clean_env, run_assistant

SOMEONE = "U0SOMEONE2"  # not who asked: the stop entry names who pressed stop


def replay_env(model, url: str) -> dict[str, str]:
    return clean_env(
        OPENAI_API_KEY=ids.OPENAI_API_KEY, OPENAI_BASE_URL=model.base_url,
        OPENAI_MAX_RETRIES="0", DATABASE_URL=url,
    )  # fmt: skip


def final_cards(slack, channel: str) -> list[dict]:
    """Each task card the fake Slack shows in `channel`, as its last update left it."""
    cards: dict[str, dict] = {}
    for (where, _ts), timeline in slack.streams.timelines.items():
        if where == channel:
            cards.update({c["id"]: c for c in timeline if c["type"] == "task_update"})
    return list(cards.values())


def test_a_stored_thread_replays_with_the_cards_its_run_showed(
    make_app, app_stores, slack, model, tmp_path
):
    app = make_app(assistant_stream="auto")
    model.script(
        replies.tool_calls(HISTORY),
        replies.tool_calls(post("We chose the noodle bar."), FINISH),
    )
    event = say(slack, "what did we decide?")
    assert app.send_event(event).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    shown = final_cards(slack, event["channel"])
    assert [(c["id"], c["title"], c["status"]) for c in shown] == [
        ("entry-2", "Reading the thread", "complete")
    ]

    # Replayed from before the run (entries 0 and 1 sent): the model does the same again.
    model.script(
        replies.tool_calls(HISTORY),
        replies.tool_calls(post("The noodle bar.")),
        replies.tool_calls(FINISH),
    )
    report = tmp_path / "report.jsonl"
    result = run_assistant(
        "replay", str(thread_of(event)), "--at", "2", "--report", str(report),
        env=replay_env(model, app_stores[0]), cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    first = report_lines(report)[0]
    assert first["recorded"]["thinking_steps"] == shown
    assert first["replay"]["thinking_steps"] == shown
    assert first["stops"] == []
    # Beside the trace, which stays the new entries alone.
    for side in ("as recorded", "replayed"):
        assert f"replay: thinking steps {side}: ✓ Reading the thread (complete)" in result.stderr
    assert "thinking steps" not in result.stdout

    model.script(replies.tool_calls(post("The noodle bar.")), replies.tool_calls(FINISH))
    markdown = tmp_path / "report.md"
    result = run_assistant(
        "replay", str(thread_of(event)), "--at", "2", "--report", str(markdown),
        env=replay_env(model, app_stores[0]), cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    text = markdown.read_text(encoding="utf-8")
    assert "| thinking steps | ✓ Reading the thread (complete) | — |" in text  # not read again


def test_a_replayed_stopped_thread_says_it_was_stopped_and_when(
    make_app, app_stores, slack, model, tmp_path
):
    slack.agents.agent = True
    app = make_app(assistant_stream="auto")
    gate = Hold()
    model.script(
        Streamed(replies.tool_calls(post(ANSWER), FINISH), StreamStyle(pauses=((20, gate),)))
    )
    event = say(slack, "lunch ideas?")
    assert app.send_event(event).status == 200
    gate.wait_reached()
    slack.wait_for_call("chat.startStream")
    stop = slack.agents.press_stop(event["channel"], event["ts"], user=SOMEONE)
    assert app.send_event(stop).status == 200
    wait_session(slack, event, "active")
    gate.release()
    app.wait_idle()
    log = app.log(thread_of(event))
    assert log[-1]["content"].startswith("Stopped: ")
    when = datetime.fromtimestamp(float(stop["event_ts"]), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    expected = {"index": log[-1]["index"], "by": f"<@{SOMEONE}>", "at": when}

    # From before the run: what the log recorded next ends at the stop.
    model.script(replies.tool_calls(post("Noodles.")), replies.tool_calls(FINISH))
    report = tmp_path / "report.jsonl"
    result = run_assistant(
        "replay", str(thread_of(event)), "--at", "2", "--report", str(report),
        env=replay_env(model, app_stores[0]), cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    first = report_lines(report)[0]
    assert first["stops"] == [expected]
    assert first["recorded"]["ended"].startswith(f"Stopped: <@{SOMEONE}> pressed stop at {when}")
    assert (
        f"stopped in the log, entry {expected['index']}: <@{SOMEONE}> pressed stop at {when}"
        in result.stderr
    )

    # The whole stopped thread: nothing recorded after it, and still the stop is shown.
    model.script(replies.tool_calls(post("Noodles.")), replies.tool_calls(FINISH))
    markdown = tmp_path / "report.md"
    result = run_assistant(
        "replay", str(thread_of(event)), "--report", str(markdown),
        env=replay_env(model, app_stores[0]), cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    text = markdown.read_text(encoding="utf-8")
    line = f"- entry {expected['index']}: <@{SOMEONE}> pressed stop at {when}"
    assert f"Stopped in the log:\n\n{line}\n" in text
