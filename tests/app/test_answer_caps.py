"""The caps bound an answer, not a process (issue 21, points 5 and 6): a run resumed after
its process was killed counts what the earlier runs of the same answer posted and the model
calls they made; a new request gets fresh caps. And an answer over the caps is never silence:
it is posted cut, with a note, and the log says so before it is posted. Through the real
app (a real `assistant serve` killed with SIGKILL, or the store as a killed process left it)
and the fakes."""

from __future__ import annotations

import re

import pytest

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from assistant.run.core.post_limits import CUT_NOTE, PostCaps, PostLimits, cut_text
from assistant.run.loop.apologies import SORRY_STEPS
from assistant.run.tools.post_message import CUT, post_metadata
from assistant.slack.text import split_message
from context.storage import EntryMeta, ThreadKey, ThreadMessage, open_store
from context.toolcalls import PostMessage
from tests.app.test_durable_runs import bot_texts, crashed_after
from tests.app.test_streaming import answer, answer_streaming
from tests.harness import mention as say
from tests.harness import thread_of

# How events are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

FINISH = ("finishRequest", {"reasoning": "done"})
# A long answer, in paragraphs: 12 of 1,000 characters.
LONG = "\n\n".join(f"Section {i}. " + "lorem ipsum " * 82 for i in range(12))


def post(text: str) -> tuple[str, dict[str, str]]:
    return ("postMessage", {"text": text, "reasoning": "answer"})


def cut_of(log: list[dict], index: int) -> int:
    """How many characters of entry `index` the log says were posted (its cut entry's)."""
    (kept,) = [
        int(m[1].replace(",", ""))
        for e in log
        if e["role"] == "system"
        and (
            m := re.match(
                rf"The postMessage of entry {index} is posted cut to its first ([\d,]+) ",
                e["content"],
            )
        )
    ]
    return kept


def refused(log: list[dict]) -> dict[int, str]:
    found = {}
    for entry in log:
        match = re.fullmatch(
            r"Error: the postMessage of entry (\d+) was not posted: (.*)\.", str(entry["content"])
        )
        if match and entry["role"] == "system":
            found[int(match[1])] = match[2]
    return found


# -- point 6: an answer over the caps is posted cut, never dropped --------------------------


@pytest.mark.parametrize("stream", ["off", "auto"])
def test_an_answer_over_the_character_cap_is_posted_cut_with_a_note(make_app, slack, model, stream):
    app = make_app(assistant_max_post_chars_per_run=5_000, assistant_stream=stream)
    event = say(slack, "tell me all")
    key = thread_of(event)
    response = replies.tool_calls(post(LONG), FINISH)
    if stream == "auto":  # streamed while written, dropped at the cap, then posted cut
        log = answer_streaming(app, slack, model, event, response)
        assert slack.calls_to("chat.startStream")
    else:
        model.script(response)
        log = answer(app, slack, event)

    kinds = [
        e["content"].get("toolCall") if e["role"] == "assistant" else e["role"] for e in log[2:]
    ]
    assert kinds == ["postMessage", "system", "finishRequest"]
    kept = cut_of(log, 2)
    assert 2_500 < kept < 5_000
    shown = cut_text(LONG, kept)
    assert len(shown) <= 5_000
    assert shown.startswith(LONG[:kept].rstrip()) and shown.endswith(CUT_NOTE)
    # What the person sees is exactly the cut the log names: nothing more, nothing less.
    assert bot_texts(slack, key) == split_message(shown)
    assert log[3]["content"] == CUT.format(
        index=2,
        kept=kept,
        note=CUT_NOTE,
        why=f"its {len(LONG):,} characters are more than the 5,000 this answer may still post "
        "of its 5,000 (ASSISTANT_MAX_POST_CHARS_PER_RUN)",
    )
    # The bot's copy of its message (what getThreadHistory reads back) is the cut too.
    copies, _ = app.assistant.store.thread_messages(key)
    assert [m.text for m in copies if m.user == f"<@{ids.BOT_USER_ID}>"] == [shown]


def test_a_cut_inside_a_code_block_closes_it_and_fits_the_messages_left():
    text = "Here it is:\n\n```\n" + "print('line')\n" * 3_000 + "```"
    limits = PostLimits(PostCaps(chars_per_run=1_000))
    cut = limits.shortened(text)
    assert cut is not None and len(cut.text) <= 1_000
    assert cut.text.endswith("\n```\n\n" + CUT_NOTE)  # the note is not rendered as code
    assert cut.text.count("```") % 2 == 0
    # Over the messages left rather than the characters: one message, cut at a break.
    limits = PostLimits(PostCaps(messages_per_run=1))
    cut = limits.shortened(LONG * 2)
    assert cut is not None and limits.chunks(cut.text) == [cut.text]
    assert cut.text == cut_text(LONG * 2, cut.kept) and (LONG * 2)[cut.kept] == "\n"


def test_a_cut_recorded_before_a_crash_is_posted_as_recorded(make_app, slack, model, app_stores):
    text = "x " * 30_000
    note = CUT.format(index=2, kept=9_000, note=CUT_NOTE, why="its … (ASSISTANT_MAX_…)")
    key = crashed_after(app_stores[0], slack, PostMessage(text=text), note)
    model.script(replies.tool_calls(FINISH))
    app = make_app()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    assert bot_texts(slack, key) == [cut_text(text, 9_000)]
    (call,) = slack.calls_to("chat.postMessage")
    assert call.params["metadata"] == post_metadata(2, 0)
    log = app.log(key)
    assert log[4]["content"].endswith("the message of entry 2 was posted now.")
    assert log[-1]["content"]["toolCall"] == "finishRequest"


def test_a_long_post_the_crash_left_undecided_is_posted_cut(make_app, slack, model, app_stores):
    text = "y " * 25_000
    key = crashed_after(app_stores[0], slack, PostMessage(text=text))
    model.script(replies.tool_calls(FINISH))
    app = make_app()
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    log = app.log(key)
    kept = cut_of(log, 2)
    assert "".join(bot_texts(slack, key)) == "".join(split_message(cut_text(text, kept)))
    assert log[4]["content"].endswith("the message of entry 2 was posted now.")
    assert refused(log) == {}


# -- point 5: the caps and the step cap hold across resumed runs ---------------------------


def _seed_posted(url: str, slack, key: ThreadKey, index: int, text: str, step: bool) -> None:
    """Entry `index`, a postMessage a killed process posted and marked posted; `step`: it was
    the first entry of a model reply (it carries the call's figures)."""
    store = open_store(url)
    try:
        meta = EntryMeta(model="gpt-4o-mini", latency_ms=5.0) if step else None
        entry = store.append(key, PostMessage(text=text), "2025-04-04T12:34:00Z", meta)
        assert entry.index == index
        message = slack.add_message(
            key.channel,
            user=ids.BOT_USER_ID,
            bot_id=ids.BOT_ID,
            text=text,
            thread_ts=key.thread_ts,
            metadata=post_metadata(index, 0),
        )
        store.mark_posted(
            key, index, message["ts"], [ThreadMessage(message["ts"], f"<@{ids.BOT_USER_ID}>", text)]
        )
    finally:
        store.close()


def test_a_resumed_run_posts_only_the_characters_its_answer_has_left(
    make_app, slack, model, app_stores
):
    key = crashed_after(app_stores[0], slack)
    _seed_posted(app_stores[0], slack, key, 2, "a" * 9_000, step=True)
    model.script(replies.tool_calls(post(LONG), FINISH))
    app = make_app(assistant_max_post_chars_per_run=10_000)
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    log = app.log(key)
    assert log[4]["content"].endswith(
        f"its {len(LONG):,} characters are more than the 1,000 this answer may still post of "
        "its 10,000 (ASSISTANT_MAX_POST_CHARS_PER_RUN)."
    )
    texts = bot_texts(slack, key)
    assert sum(len(t) for t in texts) <= 10_000
    assert texts[1:] == [cut_text(LONG, cut_of(log, 3))]


def test_a_resumed_run_counts_the_model_calls_its_answer_made(make_app, slack, model, app_stores):
    """A model that never finishes in a process that keeps dying would be asked forever: the
    step cap counts the calls of every run of the answer, so here none is left."""
    key = crashed_after(app_stores[0], slack)
    for index in (2, 3, 4):
        _seed_posted(app_stores[0], slack, key, index, f"still working {index}", step=True)
    model.script(replies.tool_calls(post("one more"), FINISH))
    app = make_app(assistant_max_steps=3)
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    assert model.requests == []
    assert bot_texts(slack, key)[-1] == SORRY_STEPS.english()
    log = app.log(key)
    assert log[-1]["content"] == (
        f"Error: stopped after 3 steps without finishRequest. "
        f'The user was told: "{SORRY_STEPS.english()}"'
    )
    assert app.assistant.store.pending(key) == []
