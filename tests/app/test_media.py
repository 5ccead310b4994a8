"""Media and message references end to end (issue: media): files attached to a mention and
links to other Slack messages, through the app over HTTP against the fake Slack (which serves
the files) and the fake model (which transcribes, and checks every request against the openai
package's own request types)."""

from __future__ import annotations

import base64
import json

import pytest

from assistant.fakes import ids
from tests.harness import answered_log, script_answers, thread_of
from tests.harness import mention as say

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(200)
JPEG = b"\xff\xd8\xff\xe0" + bytes(300)
BOB = "U0BOB0001"


def user_content(request: dict) -> list[dict] | str:
    return request["messages"][1]["content"]


def image_urls(request: dict) -> list[str]:
    content = user_content(request)
    if isinstance(content, str):
        return []
    assert content[0]["type"] == "text"
    json.loads(content[0]["text"])  # the log, first and whole: the cached prefix
    return [part["image_url"]["url"] for part in content[1:]]


def data_url(mimetype: str, data: bytes) -> str:
    return f"data:{mimetype};base64,{base64.b64encode(data).decode()}"


def test_a_png_reaches_the_model_as_an_image_part_and_the_log_as_a_marker(app, slack, model):
    script_answers(model)
    png = slack.add_file("screenshot.png", "image/png", PNG)
    log = answered_log(app, slack, say(slack, "what is wrong here?", files=[png]))
    assert log[1]["content"]["text"] == "what is wrong here?\n[Image: screenshot.png]"
    (request,) = model.requests
    assert image_urls(request) == [data_url("image/png", PNG)]
    assert model.invalid_requests == []


def test_a_file_the_app_cannot_read_is_said_and_not_sent(app, slack, model):
    script_answers(model)
    png = slack.add_file("secret.png", "image/png", PNG, access=False)
    event = say(slack, "and this?", files=[png])
    log = answered_log(app, slack, event)
    assert log[1]["content"]["text"] == "and this?\n[Image: secret.png]"
    assert log[2]["role"] == "system"
    assert log[2]["content"] == (
        "The image secret.png could not be read: Slack sent a sign-in page instead of the "
        "file: the app has no access to it (it needs the files:read scope and to be in the "
        "conversation). It is not shown to the model."
    )
    (request,) = model.requests
    assert isinstance(user_content(request), str)  # no image part at all
    assert app.assistant.store.recent_images(thread_of(event), 5) == []  # never sent later


def test_a_file_that_is_not_an_image_is_not_sent_as_one(app, slack, model):
    script_answers(model)
    fake = slack.add_file("cat.png", "image/png", b"GIF? no: plain text pretending")
    log = answered_log(app, slack, say(slack, "cute?", files=[fake]))
    assert "is not a PNG, JPEG, GIF or WebP image" in log[2]["content"]
    assert image_urls(model.requests[0]) == []


def test_the_bot_token_is_sent_only_to_slack(app, slack, model):
    script_answers(model)
    elsewhere = {
        **slack.add_file("shot.png", "image/png", PNG),
        "url_private": "https://files.example.com/shot.png",
        "url_private_download": "https://files.example.com/shot.png?download=1",
    }
    log = answered_log(app, slack, say(slack, "look", files=[elsewhere]))
    assert log[2]["content"] == (
        "The image shot.png could not be read: its URL is not on Slack, so the bot token is "
        "not sent there. It is not shown to the model."
    )
    assert slack.downloads == []


def test_a_voice_clip_is_transcribed_into_the_entry(app, slack, model):
    script_answers(model)
    model.transcription_text = "Can we move the standup to ten?"
    clip = slack.add_file(
        "audio_message.m4a",
        "audio/mp4",
        b"\x00\x00\x00\x20ftypM4A " + bytes(64),
        subtype="slack_audio",
    )
    log = answered_log(app, slack, say(slack, "", files=[clip]))
    transcript = "[Audio Message] transcript: Can we move the standup to ten?"
    assert log[1]["content"]["text"] == transcript
    (transcription,) = model.transcriptions
    assert transcription["model"] == "whisper-1"
    assert transcription["filename"] == "audio_message.m4a"


def test_a_pdf_gets_a_marker_and_is_not_downloaded(app, slack, model):
    script_answers(model)
    pdf = slack.add_file("report.pdf", "application/pdf", b"%PDF-1.7\n" + bytes(122_871))
    log = answered_log(app, slack, say(slack, "summary please", files=[pdf]))
    assert log[1]["content"]["text"] == (
        "summary please\n[File: report.pdf (application/pdf, 120 KB)]"
    )
    assert slack.downloads == []
    assert isinstance(user_content(model.requests[0]), str)


def link(channel: str, ts: str, thread_ts: str | None = None) -> str:
    url = f"https://{ids.TEAM_DOMAIN}.slack.com/archives/{channel}/p{ts.replace('.', '')}"
    if thread_ts:
        url += f"?thread_ts={thread_ts}&cid={channel}"
    return f"<{url}>"


@pytest.mark.parametrize(
    ("author", "expected"),
    [
        (BOB, f'<@{BOB}> said:\n"Deploy is at 5pm."'),
        (ids.USER_ID, 'I said:\n"Deploy is at 5pm."'),
        (ids.BOT_USER_ID, 'You said earlier: "Deploy is at 5pm."'),
    ],
    ids=["someone", "oneself", "the bot"],
)
def test_a_linked_message_is_written_in_the_seed_form(app, slack, model, author, expected):
    script_answers(model)
    linked = slack.add_message(ids.CHANNEL_ID, user=author, text="Deploy is at 5pm.")
    text = f"what did this mean? {link(ids.CHANNEL_ID, linked['ts'])}"
    log = answered_log(app, slack, say(slack, text))
    assert log[1]["content"]["text"] == f"{text}\n{expected}"


def test_a_linked_reply_in_a_thread_is_found(app, slack, model):
    script_answers(model)
    parent = slack.add_message(ids.CHANNEL_ID, user=BOB, text="Release notes?")
    reply = slack.add_message(
        ids.CHANNEL_ID, user=BOB, text="Drafted, see the doc.", thread_ts=parent["ts"]
    )
    text = f"see {link(ids.CHANNEL_ID, reply['ts'], parent['ts'])}"
    log = answered_log(app, slack, say(slack, text))
    assert log[1]["content"]["text"] == f'{text}\n<@{BOB}> said:\n"Drafted, see the doc."'


def test_a_linked_message_with_an_image_brings_the_image(app, slack, model):
    script_answers(model)
    jpeg = slack.add_file("whiteboard.jpg", "image/jpeg", JPEG)
    linked = slack.add_message(ids.CHANNEL_ID, user=BOB, text="", files=[jpeg])
    text = f"explain {link(ids.CHANNEL_ID, linked['ts'])}"
    log = answered_log(app, slack, say(slack, text))
    assert log[1]["content"]["text"] == (
        f"{text}\nThis is a message referencing a message with an image from <@{BOB}>. "
        f'<@{BOB}> said:\n"[Image]"'
    )
    assert image_urls(model.requests[0]) == [data_url("image/jpeg", JPEG)]
    assert model.invalid_requests == []


def test_a_link_to_a_message_slack_does_not_have_is_noted(app, slack, model):
    script_answers(model)
    text = f"see {link(ids.CHANNEL_ID, '1700000000.000100')}"
    log = answered_log(app, slack, say(slack, text))
    assert log[1]["content"]["text"] == (
        f"{text}\n(The linked message could not be read: Slack has no such message.)"
    )


# --- caps ------------------------------------------------------------------------------------


def png_of(size: int, marker: int) -> bytes:
    return PNG[:16] + bytes([marker]) * (size - 16)


def test_only_the_newest_images_are_sent(make_app, slack, model):
    app = make_app(assistant_max_images=2)
    script_answers(model, 3)
    first = say(slack, "one", files=[slack.add_file("1.png", "image/png", png_of(500, 1))])
    answered_log(app, slack, first)
    for n in (2, 3):
        image = slack.add_file(f"{n}.png", "image/png", png_of(500, n))
        answered_log(app, slack, say(slack, str(n), files=[image], thread_ts=first["ts"]))
    sent = image_urls(model.requests[-1])
    assert sent == [data_url("image/png", png_of(500, 2)), data_url("image/png", png_of(500, 3))]
    log = app.log(thread_of(first))
    assert "[Image: 1.png]" in log[1]["content"]["text"]  # the oldest stays a marker


def test_the_prompt_s_image_bytes_are_capped_newest_first(make_app, slack, model):
    app = make_app(assistant_max_prompt_image_bytes=5_000)
    script_answers(model, 2)
    first = say(slack, "a", files=[slack.add_file("a.png", "image/png", png_of(3_000, 1))])
    answered_log(app, slack, first)
    second = slack.add_file("b.png", "image/png", png_of(3_000, 2))
    answered_log(app, slack, say(slack, "b", files=[second], thread_ts=first["ts"]))
    assert image_urls(model.requests[0]) == [data_url("image/png", png_of(3_000, 1))]
    assert image_urls(model.requests[-1]) == [data_url("image/png", png_of(3_000, 2))]


def test_an_image_over_the_per_image_cap_is_refused_before_download(make_app, slack, model):
    app = make_app(assistant_max_image_bytes=2_048)
    script_answers(model)
    big = slack.add_file("huge.png", "image/png", png_of(4_096, 7))
    log = answered_log(app, slack, say(slack, "look", files=[big]))
    assert log[2]["content"] == (
        "The image huge.png could not be read: it is larger than 2 KB. "
        "It is not shown to the model."
    )
    assert slack.downloads == []
    assert image_urls(model.requests[0]) == []


# --- names and transcripts are recorded without controls ----------------------------------------


def test_file_names_mimetypes_and_transcripts_are_recorded_without_controls(app, slack, model):
    script_answers(model)
    model.transcription_text = "call me\x1b]8;;http://evil\x07 now\u202e\r"
    image = slack.add_file("\x1b[2Jshot\u202egnp.png", "image/png", PNG)
    pdf = slack.add_file("notes\n[Image: fake.png]\t\u2066.pdf", "application/pdf\x1b[31m", b"%PDF")
    clip = slack.add_file("\x07clip.m4a", "audio/mp4", b"\x00" * 64, subtype="slack_audio")
    event = say(slack, "files", files=[image, pdf, clip])
    log = answered_log(app, slack, event)
    assert log[1]["content"]["text"] == (
        "files\n[Image: [2Jshotgnp.png]\n"
        "[File: notes [Image: fake.png] .pdf (application/pdf[31m, 4 B)]\n"
        "[Audio Message] transcript: call me]8;;http://evil now"
    )
    assert model.transcriptions[0]["filename"] == "clip.m4a"
    ((_, kept),) = app.assistant.store.recent_images(thread_of(event), 5)
    assert kept.name == "[2Jshotgnp.png"


def test_a_long_file_name_is_cut(app, slack, model):
    script_answers(model)
    pdf = slack.add_file("x" * 5_000 + ".pdf", "application/pdf", b"%PDF")
    log = answered_log(app, slack, say(slack, "long", files=[pdf]))
    assert log[1]["content"]["text"] == f"long\n[File: {'x' * 199}… (application/pdf, 4 B)]"
