"""getThreadHistory end to end: Slack's pages are read once, then the store serves the thread."""

from __future__ import annotations

from datetime import UTC, datetime

from fakes import ids
from fakes import openai_responses as replies
from tests.harness import mention as say
from tests.harness import thread_of

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


def history_entry(order: str, lines: list[str]) -> str:
    return "\n".join([f"Thread history ({len(lines)} messages, {order}):", *lines])


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
        (
            "system",
            history_entry(
                "newest first",
                [line(first["ts"], ids.USER_ID, "what is this thread about?"), *before[:-3:-1]],
            ),
        ),
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
    model.script(history_call(ascending=False, limit=4), replies.finish_request())
    second = say(slack, "anything new?", thread_ts=thread_ts)
    app.send_event(second)
    slack.wait_for_call("reactions.remove", count=2)
    app.wait_idle()

    assert len(slack.calls_to("conversations.replies")) == 3
    post = slack.calls_to("chat.postMessage")[0].response
    log = app.log(key)
    assert log[-3]["content"]["toolCall"] == "getThreadHistory"
    assert log[-2]["content"] == history_entry(
        "newest first",
        [
            line(second["ts"], ids.USER_ID, "anything new?"),
            line(post["ts"], ids.BOT_USER_ID, "It is about lunch."),
            line(first["ts"], ids.USER_ID, "what is this thread about?"),
            before[-1],
        ],
    )
    assert log[-1]["content"]["toolCall"] == "finishRequest"
