"""Reading a message's files and links before the acknowledgement is bounded (issue: events):
a read the fakes hold longer than the app waits does not hold the ack; the message is
recorded once, with a note for what was not read; a retry meanwhile reads nothing again."""

from __future__ import annotations

import gc
import logging
from concurrent.futures import ThreadPoolExecutor

import pytest

from assistant.fakes import ids
from assistant.fakes import requests as event_requests
from assistant.fakes.openai import responses as replies
from tests.harness import mention as say
from tests.harness import thread_of

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(200)
CLIP = b"\x00\x00\x00\x20ftypM4A " + bytes(64)
LATE_LINK = "(The linked message could not be read in time.)"


@pytest.fixture(autouse=True)
def asyncio_errors(caplog: pytest.LogCaptureFixture):
    """No task left pending, no session left open: asyncio reports both as errors (when the
    loop closes, or when the object is collected)."""
    caplog.set_level(logging.WARNING)
    yield
    gc.collect()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


def answers(model) -> None:
    model.script(
        replies.tool_calls(
            ("postMessage", {"text": "Seen.", "reasoning": "answer"}),
            ("finishRequest", {"reasoning": "done"}),
        )
    )


def link(ts: str) -> str:
    return f"<https://{ids.TEAM_DOMAIN}.slack.com/archives/{ids.CHANNEL_ID}/p{ts.replace('.', '')}>"


def finish(app, slack) -> None:
    """Until the run the message started has answered, and the app has stopped (so that what
    it left behind is reported now)."""
    slack.wait_for_call("reactions.remove")
    app.wait_handled()
    app.stop()


def test_a_held_link_read_does_not_hold_the_ack_and_the_file_is_read_meanwhile(app, slack, model):
    answers(model)
    linked = slack.add_message(ids.CHANNEL_ID, user="U0BOB0001", text="Deploy at 5.")
    held = slack.hold("conversations.history")
    png = slack.add_file("shot.png", "image/png", PNG)
    mention = say(slack, f"see {link(linked['ts'])}", files=[png])

    assert app.send_event(mention).status == 200
    assert held.reached  # and not released: the ack came back while Slack held the read
    log = app.log(thread_of(mention))
    assert log[1]["content"]["text"] == f"see {link(linked['ts'])}\n[Image: shot.png]\n{LATE_LINK}"
    assert [ref.name for _, ref in app.assistant.store.recent_images(thread_of(mention), 1)] == [
        "shot.png"
    ]
    held.release()
    finish(app, slack)


def test_a_rate_limited_link_read_does_not_hold_the_ack(app, slack, model):
    answers(model)
    linked = slack.add_message(ids.CHANNEL_ID, user="U0BOB0001", text="Deploy at 5.")
    slack.rate_limit("conversations.history", retry_after=60)
    mention = say(slack, f"see {link(linked['ts'])}")

    assert app.send_event(mention).status == 200
    log = app.log(thread_of(mention))
    assert log[1]["content"]["text"] == f"see {link(linked['ts'])}\n{LATE_LINK}"
    finish(app, slack)
    assert [c.status for c in slack.calls_to("conversations.history")] == [429]  # not retried


def test_a_held_image_download_is_recorded_as_not_read_in_time(app, slack, model):
    answers(model)
    png = slack.add_file("shot.png", "image/png", PNG)
    held = slack.hold_download(png)
    mention = say(slack, "look", files=[png])

    assert app.send_event(mention).status == 200
    assert held.reached
    log = app.log(thread_of(mention))
    assert log[1]["content"]["text"] == "look\n[Image: shot.png]"
    assert log[2]["content"] == (
        "The image shot.png could not be read: it took too long. It is not shown to the model."
    )
    assert app.assistant.store.recent_images(thread_of(mention), 1) == []
    held.release()
    finish(app, slack)


def test_a_held_transcription_is_recorded_as_not_transcribed(app, slack, model):
    answers(model)
    held = model.hold_transcription()
    clip = slack.add_file("clip.m4a", "audio/mp4", CLIP, subtype="slack_audio")
    pdf = slack.add_file("report.pdf", "application/pdf", b"%PDF")
    mention = say(slack, "listen", files=[clip, pdf])

    assert app.send_event(mention).status == 200
    assert held.reached
    log = app.log(thread_of(mention))
    assert log[1]["content"]["text"] == (
        "listen\n[Audio Message: clip.m4a] (not transcribed: it took too long)\n"
        "[File: report.pdf (application/pdf, 4 B)]"
    )
    held.release()
    finish(app, slack)
    assert len(model.transcriptions) == 1


def test_a_retry_during_the_read_does_not_read_again_and_is_recorded_once(app, slack, model):
    answers(model)
    linked = slack.add_message(ids.CHANNEL_ID, user="U0BOB0001", text="Deploy at 5.")
    held = slack.hold("conversations.history")
    png = slack.add_file("shot.png", "image/png", PNG)
    mention = say(slack, f"see {link(linked['ts'])}", files=[png])
    payload = event_requests.event_callback(mention)

    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(app.send_event, mention, payload=payload)
        held.wait_reached()  # the first delivery is being read
        retry = app.send_event(mention, payload=payload, retry_num=1)
        assert (first.result().status, retry.status) == (200, 200)
    # The held read is the only one: not answered yet, and no second read was answered.
    assert slack.calls_to("conversations.history") == []
    assert slack.downloads == [png["id"]]

    held.release()
    finish(app, slack)
    assert len(slack.calls_to("conversations.history")) == 1
    log = app.log(thread_of(mention))
    assert [e["role"] for e in log] == ["system", "user", "assistant", "assistant"]
    assert log[1]["content"]["text"].endswith(LATE_LINK)
