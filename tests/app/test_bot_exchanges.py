"""Two bots answering each other (issue 32): with ASSISTANT_ANSWER_BOTS=true another bot's
messages in a thread are answered ASSISTANT_MAX_BOT_EXCHANGES_PER_THREAD times; the next is
not recorded, and the thread is told once. Through the real app and the fakes."""

from __future__ import annotations

import pytest

from assistant.fakes.events import builders as events
from assistant.intake.bot_exchanges import NOTE, stop_line
from tests.harness import mention, script_answers, seed, thread_of

# How requests are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = [pytest.mark.app_backend, pytest.mark.listeners]

OTHER_BOT = "U0OTHERBOT"


def bot_says(slack, text: str, thread_ts: str) -> dict:
    return seed(slack, events.bot_message(
        text, bot_id="B0OTHERBOT", user=OTHER_BOT, app_id="A0OTHERAPP", thread_ts=thread_ts,
    ))  # fmt: skip


def test_another_bot_is_answered_three_times_then_the_thread_is_told_once(make_app, slack, model):
    app = make_app(assistant_answer_bots=True, assistant_max_bot_exchanges_per_thread=3)
    script_answers(model, 4)
    started = mention(slack, "bot, talk to the other bot")
    assert app.send_event(started).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_handled()
    for number in range(6):  # the other bot answers every answer of ours
        assert app.send_event(bot_says(slack, f"reply {number}", started["ts"])).status == 200
        app.wait_handled()

    log = app.log(thread_of(started))
    from_bot = [
        e for e in log if e["role"] == "user" and e["content"]["userid"] == f"<@{OTHER_BOT}>"
    ]
    assert [e["content"]["text"] for e in from_bot] == ["reply 0", "reply 1", "reply 2"]
    assert len(model.requests) == 4  # the person's mention, and the bot's first three
    note = NOTE.format(bot=OTHER_BOT, count=3)
    told = [c for c in slack.calls_to("chat.postMessage") if c.params["text"] == note]
    assert len(told) == 1 and told[0].params["thread_ts"] == started["ts"]
    assert [e["content"] for e in log].count(stop_line(OTHER_BOT, 3)) == 1
    assert log[-1]["content"] == stop_line(OTHER_BOT, 3)
