"""getThreadHistory end to end: Slack's pages are read once, then the store serves the thread."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from assistant.fakes import ids
from assistant.fakes.events import builders as events
from assistant.fakes.openai import responses as replies
from assistant.slack.history import slack_time
from tests.harness import mention as say
from tests.harness import prompt_log, thread_of

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

OTHER_USER = "U0FAKEUSR2"
BEFORE_MENTION = 450  # the parent and 449 replies: with the mention, three pages of 200


def when(ts: str) -> str:
    return datetime.fromtimestamp(int(float(ts)), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def line(ts: str, user: str, text: str) -> str:
    return f"[{when(ts)}] <@{user}>: {text}"


def seed_thread(slack) -> tuple[str, list[str]]:
    """A thread of people talking before anyone mentions the bot: its ts, and its history
    lines oldest first."""
    parent = slack.add_message(ids.CHANNEL_ID, user=ids.USER_ID, text="fish &amp; chips?")
    lines = [line(parent["ts"], ids.USER_ID, "fish & chips?")]
    for n in range(1, BEFORE_MENTION):
        user = (ids.USER_ID, OTHER_USER)[n % 2]
        reply = slack.add_message(
            ids.CHANNEL_ID, user=user, text=f"reply {n}", thread_ts=parent["ts"]
        )
        lines.append(line(reply["ts"], user, f"reply {n}"))
    return parent["ts"], lines


def history_call(ascending: bool, limit: int) -> replies.Completion:
    args = {"ascending": ascending, "limit": limit, "reasoning": "read the thread"}
    return replies.tool_calls(("getThreadHistory", args))


def history_entry(order: str, lines: list[str], count: int | None = None) -> str:
    count = len(lines) if count is None else count
    return "\n".join([f"Thread history ({count} messages, {order}):", *lines])


def test_history_is_paged_once_ordered_limited_and_then_served_from_the_store(app, slack, model):
    thread_ts, before = seed_thread(slack)
    model.script(
        history_call(ascending=True, limit=5),
        history_call(ascending=False, limit=3),
        replies.tool_calls(("postMessage", {"text": "It is about lunch.", "reasoning": "r"})),
        replies.finish_request(),
    )
    first = say(slack, "what is this thread about?", thread_ts=thread_ts)
    app.send_event(first)
    slack.wait_for_call("reactions.remove")
    app.wait_idle()

    key = thread_of(first)
    log = app.log(key)
    assert [(e["role"], e["content"] if e["role"] == "system" else None) for e in log[2:6]] == [
        ("assistant", None),
        ("system", history_entry("oldest first", before[:5])),
        ("assistant", None),
        # The mention is entry 1, which the prompt shows whole: named, not written again.
        ("system", history_entry("newest first", ["(entry 1)", *before[:-3:-1]], count=3)),
    ]
    assert log[2]["content"] == {
        "toolCall": "getThreadHistory",
        "ascending": True,
        "limit": 5,
        "reasoning": "read the thread",
    }
    pages = slack.calls_to("conversations.replies")
    assert len(pages) == 3  # 451 messages, 200 a page, read once for both calls
    assert [str(p.params["limit"]) for p in pages] == ["200"] * 3
    assert "cursor" not in pages[0].params
    assert all(p.params.get("cursor") for p in pages[1:])
    assert all(p.params["ts"] == thread_ts for p in pages)

    # A later mention: Slack is not asked again, yet what happened since is in the history.
    model.script(history_call(ascending=False, limit=4), answer("Nothing new."))
    second = say(slack, "anything new?", thread_ts=thread_ts)
    app.send_event(second)
    slack.wait_for_call("reactions.remove", count=2)
    app.wait_idle()

    assert len(slack.calls_to("conversations.replies")) == 3
    post = slack.calls_to("chat.postMessage")[0].response
    log = app.log(key)
    assert log[-4]["content"]["toolCall"] == "getThreadHistory"
    # The new mention (entry 8), the bot's reply (entry 6) and the first mention (entry 1) are
    # in the prompt whole; the message from before the bot was there is written out.
    assert [e["content"].get("text") for e in (log[8], log[6], log[1])] == [
        "anything new?",
        "It is about lunch.",
        "what is this thread about?",
    ]
    assert post["ts"] == app.assistant.store.metadata(key)[6].slack_ts
    assert log[-3]["content"] == history_entry(
        "newest first", ["(entries 8, 6, 1)", before[-1]], count=4
    )
    assert [e["content"]["toolCall"] for e in log[-2:]] == ["postMessage", "finishRequest"]


def answer(text: str) -> replies.Completion:
    return replies.tool_calls(
        ("postMessage", {"text": text, "reasoning": "answer"}),
        ("finishRequest", {"reasoning": "done"}),
    )


def test_an_edited_message_is_written_out_with_its_new_text(app, slack, model):
    model.script(answer("The café downstairs."))
    first = say(slack, "where do we eat?")
    app.send_event(first)
    app.wait_handled()
    edit = events.message_changed(
        ts=first["ts"],
        text=f"<@{ids.BOT_USER_ID}> where do we eat on Friday?",
        previous_text=first["text"],
    )
    app.send_event(edit)
    app.wait_handled()
    model.script(history_call(ascending=True, limit=10), answer("You do."))
    second = say(slack, "and who pays?", thread_ts=first["ts"])
    app.send_event(second)
    app.wait_handled()

    log = app.log(thread_of(first))
    # Entry 1 still says "where do we eat?": the edited message is not that entry any more.
    assert log[1]["content"]["text"] == "where do we eat?"
    assert log[-3]["content"] == history_entry(
        "oldest first",
        [line(first["ts"], ids.USER_ID, "where do we eat on Friday?"), "(entries 2, 5)"],
        count=3,
    )


def test_messages_whose_entries_the_prompt_left_out_are_written_in_full(make_app, slack, model):
    app = make_app(assistant_context_tokens=2_600, assistant_answer_tokens=500)
    filler = "Could you look at the deploy of the billing service again, please? " * 6
    first = say(slack, "question 0: " + filler)
    key = thread_of(first)
    model.script(*(answer(f"answer {n}") for n in range(12)))
    app.send_event(first)
    app.wait_handled()
    for n in range(1, 12):
        app.send_event(say(slack, f"question {n}: {filler}", thread_ts=first["ts"]))
        app.wait_handled()
    model.script(history_call(ascending=False, limit=200), answer("In short: the deploy."))
    app.send_event(say(slack, "sum it up", thread_ts=first["ts"]))
    app.wait_handled()

    log = app.log(key)
    asked = prompt_log(model.requests[-2])  # the prompt the history call was made on
    assert asked[0]["index"] == 0 and "omitted" in asked[1]
    left_out = range(asked[1]["omitted"]["from"], asked[1]["omitted"]["to"] + 1)
    metas = app.assistant.store.metadata(key)

    def written(entry: dict) -> str:
        author = entry["content"].get("userid", f"<@{ids.BOT_USER_ID}>")
        stamp = slack_time(metas[entry["index"]].slack_ts)
        return f"[{stamp}] {author}: {entry['content']['text']}"

    # Every message before the history call, newest first: the people's and the bot's.
    newest_first = [
        e
        for e in log[-5::-1]
        if e["role"] == "user"
        or (e["role"] == "assistant" and e["content"]["toolCall"] == "postMessage")
    ]
    shown = [str(e["index"]) for e in newest_first if e["index"] not in left_out]
    full = [written(e) for e in newest_first if e["index"] in left_out]
    assert len(shown) > 1 and len(full) > 1
    assert log[-3]["content"] == history_entry(
        "newest first", [f"(entries {', '.join(shown)})", *full], count=len(newest_first)
    )
    assert f"question 0: {filler}".strip() in log[-3]["content"]
