"""A routine's run end to end on the Bolt tier: the app's own tick finds it due, posts a
top-level message in its channel naming the routine, records the prompt as the first user
entry of that thread's log in the creator's name, and the channel's usual run answers it in
the thread; a creator who left the workspace pauses it and is told why. Every Slack and
model call goes to the fakes over HTTP."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from assistant.fakes import ids
from assistant.i18n.words import Words
from assistant.routines.runs import entry_text, heading
from context.channels import ChannelConfig
from context.storage import Routine, ThreadKey, open_store
from context.storage.tables import moment
from tests.app.test_telemetry import otel, receiver, runs
from tests.harness import script_answers

pytestmark = [pytest.mark.listeners]
__all__ = ["otel", "receiver"]  # fixtures of test_telemetry, used here


def due_routine(url: str, creator: str = ids.USER_ID, prompt: str = "Summarize the day.",
                locale: str | None = None) -> Routine:  # fmt: skip
    store = open_store(url)
    due = moment(datetime.now(UTC) - timedelta(minutes=1))
    try:
        if locale is not None:
            store.set_channel_config(ChannelConfig(team=ids.TEAM_ID, channel=ids.CHANNEL_ID,
                                                   locale=locale))  # fmt: skip
        return store.add_routine(ids.TEAM_ID, ids.CHANNEL_ID, prompt, creator,
                                 cron="0 9 * * *", tz="Europe/Paris", next_due=due)  # fmt: skip
    finally:
        store.close()


def test_a_due_routine_starts_a_thread_that_the_channel_run_answers(make_app, slack, model,
                                                                    tmp_path):  # fmt: skip
    url = f"sqlite:///{tmp_path / 'store.db'}"
    routine = due_routine(url)
    slack.add_user(ids.USER_ID, "ada")
    script_answers(model)
    app = make_app(database_url=url)
    top, answer = slack.wait_for_call("chat.postMessage", count=2)
    assert top.params["channel"] == ids.CHANNEL_ID and "thread_ts" not in top.params
    assert top.params["text"] == heading(routine)
    ts = top.response["ts"]
    assert answer.params["thread_ts"] == ts and answer.params["text"] == "Seen."
    app.wait_idle()
    log = app.log(ThreadKey(ids.TEAM_ID, ids.CHANNEL_ID, ts))
    assert log[1]["role"] == "user"
    assert log[1]["content"] == {"userid": f"<@{ids.USER_ID}>", "text": entry_text(routine)}
    kept = app.assistant.store.routine(routine.id)
    assert kept is not None and kept.last_thread_ts == ts and kept.last_outcome == "started"
    assert kept.next_due is not None and kept.next_due > moment(datetime.now(UTC))


def test_a_creator_who_left_pauses_the_routine_and_nothing_is_posted(make_app, slack, model,
                                                                     tmp_path):  # fmt: skip
    url = f"sqlite:///{tmp_path / 'store.db'}"
    routine = due_routine(url)
    slack.add_user(ids.USER_ID, "ada", deleted=True)
    make_app(database_url=url)
    (dm,) = slack.wait_for_call("chat.postMessage")
    assert dm.params["channel"] == ids.USER_ID and "left the workspace" in dm.params["text"]
    store = open_store(url)
    try:
        kept = store.routine(routine.id)
    finally:
        store.close()
    assert kept is not None and kept.paused and "left the workspace" in (kept.paused_reason or "")
    assert len(slack.calls_to("chat.postMessage")) == 1


def test_the_runs_span_names_the_routine(otel, make_app, slack, model, tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    routine = due_routine(url)
    slack.add_user(ids.USER_ID, "ada")
    script_answers(model)
    make_app(database_url=url)
    [run] = otel.wait_for(runs)
    assert run.attributes["assistant.routine.id"] == routine.id
    assert run.attributes["assistant.run.outcome"] == "finished"


def test_a_creator_the_channel_no_longer_admits_pauses_it(make_app, slack, model, tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    routine = due_routine(url)
    store = open_store(url)
    try:  # only someone else may use the bot in the channel now
        store.set_channel_config(ChannelConfig(team=ids.TEAM_ID, channel=ids.CHANNEL_ID,
                                               access="listed", users=("U0SOMEONE1",)))  # fmt: skip
    finally:
        store.close()
    slack.add_user(ids.USER_ID, "ada")
    make_app(database_url=url)
    (dm,) = slack.wait_for_call("chat.postMessage")
    assert dm.params["channel"] == ids.USER_ID and "may no longer use the bot" in dm.params["text"]
    assert stored(url, routine.id).paused


def test_failed_starts_in_a_row_pause_it_and_tell_the_creator(make_app, slack, model, tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    routine = due_routine(url)
    store = open_store(url)
    try:  # already failed once before: this failure is the second in a row
        store.routine_ran(routine.id, None, "failed: Slack said channel_not_found", False, 2)
    finally:
        store.close()
    slack.add_user(ids.USER_ID, "ada")
    slack.fail("chat.postMessage", "channel_not_found")
    make_app(database_url=url, assistant_routine_failures=2)
    dm = slack.wait_for_call("chat.postMessage", count=2)[-1]
    assert dm.params["channel"] == ids.USER_ID and "2 failed runs in a row" in dm.params["text"]
    kept = stored(url, routine.id)
    assert (
        kept.paused
        and kept.failures == 2
        and kept.last_outcome == ("failed: Slack said channel_not_found")
    )


def stored(url: str, routine_id: int) -> Routine:
    store = open_store(url)
    try:
        kept = store.routine(routine_id)
    finally:
        store.close()
    assert kept is not None
    return kept


def test_the_heading_speaks_the_channels_language_and_pings_no_channel(make_app, slack, model,
                                                                       tmp_path):  # fmt: skip
    url = f"sqlite:///{tmp_path / 'store.db'}"
    routine = due_routine(url, prompt="<!channel> <!subteam^S0OPS|@ops> resumen", locale="es")
    slack.add_user(ids.USER_ID, "ada")
    script_answers(model)
    make_app(database_url=url)
    top, _ = slack.wait_for_call("chat.postMessage", count=2)
    assert top.params["text"] == heading(routine, Words("es"))
    assert top.params["text"].startswith(f"⏰ Rutina {routine.id} de <@{ids.USER_ID}>: @")
    assert "<!channel>" not in top.params["text"] and "<!subteam" not in top.params["text"]


def test_the_pause_note_speaks_the_creators_language(make_app, slack, model, tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    routine = due_routine(url)
    slack.add_user(ids.USER_ID, "ada", deleted=True, locale="pt-BR")
    make_app(database_url=url)
    (dm,) = slack.wait_for_call("chat.postMessage")
    assert dm.params["text"].startswith(f"Sua rotina {routine.id} em <#{ids.CHANNEL_ID}>")
    assert "left the workspace" in dm.params["text"]  # the reason as the store keeps it
