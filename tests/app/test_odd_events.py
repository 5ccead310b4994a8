"""Odd but signed events (issue: events), through the real app: what cannot be recorded is
acknowledged with one warning naming the field and the event, never a traceback (a 500 would
make Slack retry in vain); a message with one odd part is recorded without it, and says so."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from assistant.fakes import ids
from assistant.fakes import requests as event_requests
from assistant.fakes.events import builders as events
from assistant.fakes.openai import responses as replies
from tests.harness import mention as say
from tests.harness import thread_of

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(200)
SECRET_TEXT = "my very private words"

Payload = dict[str, Any]

# How odd events are handled: listener tests, on the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners


@pytest.fixture(autouse=True)
def warnings(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.WARNING)
    return caplog


def logged(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """Warnings and errors the app logged; none of them may carry a traceback or the text."""
    records = [r for r in caplog.records if r.levelno >= logging.WARNING]
    # The fake app is not declared as an agent, and its panel events are the legacy view's:
    # the process says each once, whatever the event, in whichever test comes first.
    once = {"assistant.run.core.sessions", "assistant.panel.legacy_view"}
    records = [r for r in records if r.name not in once]
    assert [r.getMessage() for r in records if r.exc_info or r.exc_text] == []
    assert "Traceback" not in caplog.text
    assert SECRET_TEXT not in caplog.text
    return records


def one_warning(caplog: pytest.LogCaptureFixture, *about: str) -> str:
    (record,) = logged(caplog)
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    for part in about:
        assert part in message
    return message


def answer(model) -> None:
    model.script(
        replies.tool_calls(("postMessage", {"text": "Seen.", "reasoning": "answer"})),
        replies.finish_request(),
    )


def answered(app, slack, model) -> dict[str, Any]:
    answer(model)
    mention = say(slack, SECRET_TEXT)
    assert app.send_event(mention).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_handled()
    return mention


def drop(field: str) -> Callable[[Payload], None]:
    return lambda payload: payload["event"].pop(field)


def put(field: str, value: Any) -> Callable[[Payload], None]:
    return lambda payload: payload["event"].__setitem__(field, value)


UNRECORDABLE = [
    pytest.param(drop("channel"), "channel", id="no-channel"),
    pytest.param(drop("ts"), "ts", id="no-ts"),
    pytest.param(lambda payload: payload.pop("team_id"), "team_id", id="no-team_id"),
    pytest.param(put("ts", "yesterday"), "ts", id="ts-not-a-slack-ts"),
    pytest.param(put("ts", "17000000000.000100"), "ts", id="ts-too-long"),
    pytest.param(put("ts", 1700000000.0001), "ts", id="ts-a-number"),
    pytest.param(put("thread_ts", "../1"), "thread_ts", id="thread_ts-not-a-slack-ts"),
    pytest.param(put("channel", {"id": ids.CHANNEL_ID}), "channel", id="channel-not-a-string"),
    pytest.param(put("user", ["U1"]), "user", id="user-not-a-string"),
]


@pytest.mark.parametrize(("break_it", "field"), UNRECORDABLE)
def test_a_mention_that_cannot_be_recorded_is_acknowledged_with_one_warning(
    app, slack, model, warnings, break_it, field
):
    mention = say(slack, SECRET_TEXT)
    payload = event_requests.event_callback(mention)
    break_it(payload)
    assert app.send_event(mention, payload=payload).status == 200
    app.wait_handled()

    one_warning(warnings, f"{field}:", payload["event_id"], "not recorded")
    assert app.assistant.store.threads() == []
    assert model.requests == []


def test_a_direct_message_without_a_channel_is_acknowledged_with_one_warning(
    app, slack, model, warnings
):
    dm = events.dm(SECRET_TEXT)
    del dm["channel"]
    payload = event_requests.event_callback(dm)
    assert app.send_event(dm, payload=payload).status == 200
    app.wait_handled()

    one_warning(warnings, "channel:", payload["event_id"])
    assert app.assistant.store.threads() == []


def test_a_mention_whose_text_is_not_a_string_is_recorded_without_it(app, slack, model, warnings):
    answer(model)
    mention = say(slack, "hi")
    mention["text"] = {"text": SECRET_TEXT}
    payload = event_requests.event_callback(mention)
    assert app.send_event(mention, payload=payload).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_handled()

    one_warning(warnings, "text: not a string", payload["event_id"])
    log = app.log(thread_of(mention))
    assert log[1]["content"] == {"userid": f"<@{ids.USER_ID}>", "text": ""}
    assert log[2]["content"] == (
        "The text of this message could not be read: its form from Slack was malformed."
    )
    assert len(slack.calls_to("chat.postMessage")) == 1  # and it is answered


def test_a_message_with_bad_files_among_good_ones_is_recorded_with_the_good_one_once(
    app, slack, model, warnings
):
    answer(model)
    good = slack.add_file("shot.png", "image/png", PNG)
    pdf = slack.add_file("report.pdf", "application/pdf", b"%PDF")
    bad = [
        "F0NOTADICT",
        {"id": "F0BADURL", "name": "x.png", "mimetype": "image/png", "url_private": "https://[::1"},
        {**pdf, "size": "big"},
        {"id": "F0BADPORT", "name": "y.png", "url_private": "https://files.slack.com:99999/y"},
    ]
    mention = say(slack, "look", files=[bad[0], good, *bad[1:]])
    payload = event_requests.event_callback(mention)
    assert app.send_event(mention, payload=payload).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_handled()
    message = one_warning(
        warnings, payload["event_id"], "files.0:", "files.2.url_private", "files.3.size"
    )
    assert "files.4.url_private" in message

    # Slack's retry of the same delivery: acknowledged, recorded once, nothing read again.
    assert app.send_event(mention, payload=payload, retry_num=1).status == 200
    app.wait_handled()

    log = app.log(thread_of(mention))
    assert [e["role"] for e in log] == ["system", "user", "system", "assistant", "assistant"]
    assert log[1]["content"]["text"] == "look\n[Image: shot.png]"
    assert log[2]["content"] == (
        "4 files of this message could not be read: their descriptions from Slack were malformed."
    )
    assert [ref.name for _, ref in app.assistant.store.recent_images(thread_of(mention), 5)] == [
        "shot.png"
    ]
    assert slack.downloads == [good["id"], good["id"]]  # checked once, then sent to the model
    assert len(logged(warnings)) == 2  # one line per delivery


def test_files_that_are_not_a_list_are_left_out_with_a_note(app, slack, model, warnings):
    answer(model)
    mention = say(slack, "see attached", files=[])
    mention["files"] = "F0123"
    payload = event_requests.event_callback(mention)
    assert app.send_event(mention, payload=payload).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_handled()

    one_warning(warnings, "files: not a list", payload["event_id"])
    log = app.log(thread_of(mention))
    assert log[1]["content"]["text"] == "see attached"
    assert log[2]["content"] == (
        "A file of this message could not be read: its description from Slack was malformed."
    )


def test_a_linked_message_s_malformed_file_is_left_out_with_a_note(app, slack, model, warnings):
    answer(model)
    odd = {"id": 7, "mimetype": "image/png", "size": -1}
    linked = slack.add_message(ids.CHANNEL_ID, user="U0BOB0001", text="the chart", files=[odd])
    mention = say(slack, f"see {link(ids.CHANNEL_ID, linked['ts'])}")
    assert app.send_event(mention).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_handled()

    one_warning(warnings, "files.0.id", "files.0.size")
    log = app.log(thread_of(mention))
    assert log[1]["content"]["text"].endswith('<@U0BOB0001> said:\n"the chart"')
    assert log[2]["content"] == (
        "A file of a linked message could not be read: its description from Slack was malformed."
    )


def test_a_linked_message_with_odd_text_and_files_is_quoted_without_them(app, slack, model):
    answer(model)
    linked = slack.add_message(ids.CHANNEL_ID, user="U0BOB0001", text="", files=["not a file"])
    linked["text"] = ["not", "a string"]  # what Slack gives back is checked too
    mention = say(slack, f"see {link(ids.CHANNEL_ID, linked['ts'])}")
    assert app.send_event(mention).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_handled()

    log = app.log(thread_of(mention))
    assert log[1]["content"]["text"].endswith('<@U0BOB0001> said:\n""')
    assert log[2]["content"] == (
        "A file of a linked message could not be read: its description from Slack was malformed."
    )


def link(channel: str, ts: str) -> str:
    return f"<https://{ids.TEAM_DOMAIN}.slack.com/archives/{channel}/p{ts.replace('.', '')}>"


def edit_of(mention: dict[str, Any]) -> Payload:
    return event_requests.event_callback(
        events.message_changed(ts=mention["ts"], text="new words", previous_text=mention["text"])
    )


def deletion_of(mention: dict[str, Any]) -> Payload:
    return event_requests.event_callback(
        events.message_deleted(deleted_ts=mention["ts"], previous_text=mention["text"])
    )


def inner(change: Callable[[dict[str, Any]], object]) -> Callable[[Payload], None]:
    return lambda payload: change(payload["event"])


ODD_CHANGES = [
    pytest.param(edit_of, inner(lambda e: e.pop("message")), "message", id="edit-no-message"),
    pytest.param(
        edit_of, inner(lambda e: e.__setitem__("message", "x")), "message", id="edit-not-a-dict"
    ),
    pytest.param(edit_of, inner(lambda e: e["message"].pop("ts")), "message.ts", id="edit-no-ts"),
    pytest.param(
        edit_of,
        inner(lambda e: e["message"].__setitem__("text", 42)),
        "message.text",
        id="edit-text-not-a-string",
    ),
    pytest.param(edit_of, inner(lambda e: e.pop("channel")), "channel", id="edit-no-channel"),
    pytest.param(
        deletion_of, inner(lambda e: e.pop("deleted_ts")), "deleted_ts", id="deletion-no-ts"
    ),
    pytest.param(
        deletion_of,
        inner(lambda e: e.__setitem__("deleted_ts", "soon")),
        "deleted_ts",
        id="deletion-bad-ts",
    ),
    pytest.param(
        deletion_of,
        inner(lambda e: e.__setitem__("previous_message", [])),
        "previous_message",
        id="deletion-previous-not-a-dict",
    ),
]


@pytest.mark.parametrize(("change_of", "break_it", "field"), ODD_CHANGES)
def test_an_odd_edit_or_deletion_is_acknowledged_with_one_warning(
    app, slack, model, warnings, change_of, break_it, field
):
    mention = answered(app, slack, model)
    before = app.log(thread_of(mention))
    warnings.clear()
    payload = change_of(mention)
    break_it(payload)
    assert app.send_event(payload["event"], payload=payload).status == 200
    app.wait_handled()

    one_warning(warnings, f"{field}", payload["event_id"], "not recorded")
    assert app.log(thread_of(mention)) == before


@pytest.mark.parametrize(
    "odd",
    [
        {"assistant_thread": None},
        {"assistant_thread": {"user_id": "U1", "channel_id": "D1", "thread_ts": "yesterday"}},
        {"assistant_thread": {"channel_id": "D1", "thread_ts": "1700000000.000100"}},
    ],
    ids=["no-thread", "bad-ts", "no-user"],
)
def test_an_odd_panel_event_is_acknowledged_with_one_warning(app, slack, warnings, odd):
    for kind in ("assistant_thread_started", "assistant_thread_context_changed"):
        event = {"type": kind, "event_ts": "1700000000.000200", **odd}
        assert app.send_event(event).status == 200
    app.wait_listeners()
    shown = [r.getMessage() for r in logged(warnings)]
    assert len(shown) == 2 and all("assistant_thread" in m and "not recorded" in m for m in shown)
    assert app.assistant.store.threads() == []
