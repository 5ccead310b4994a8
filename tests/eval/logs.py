"""A recorded thread to evaluate on: a question, a history read, a post and its finish."""

from __future__ import annotations

from context.entry import UserContent
from context.log import ContextLog
from context.storage import EntryMeta, Store, ThreadKey, Vote
from context.toolcalls import FinishRequest, GetThreadHistory, PostMessage

THREAD = ThreadKey("T0EVAL", "C0EVAL", "1800000000.000100")
QUESTION = "Oi, me dê uma sugestão de almoço, <@U0BOB> e eu vamos juntos."
POST = "Que tal um risoto de cogumelos com <@U0BOB>? Veja https://example.com/risoto"


def contents() -> list[tuple[object, EntryMeta]]:
    """Entries 0-5; the two model replies: [2] and [4, 5] (the figures mark where each starts)."""
    reply = EntryMeta(model="gpt-test", prompt_tokens=100, completion_tokens=10, latency_ms=5.0)
    return [
        ("You are Aya, a helpful assistant.", EntryMeta()),
        (UserContent(userid="<@U0ASKER>", text=QUESTION), EntryMeta(slack_ts="1800000000.000100")),
        (GetThreadHistory(reasoning="Context first"), reply),
        ("Thread history (1 message):\n[…] <@U0ASKER>: " + QUESTION, EntryMeta()),
        (PostMessage(text=POST, reasoning="A suggestion"), reply),
        (FinishRequest(reasoning="Answered"), EntryMeta()),
    ]


def log_json() -> str:
    log = ContextLog()
    for number, (content, _) in enumerate(contents()):
        log.append(content, f"2025-04-04T12:3{number}:00Z")  # type: ignore[arg-type]
    return log.prompt_text()


def store_thread(store: Store, vote: str | None = None) -> None:
    for number, (content, meta) in enumerate(contents()):
        store.append(THREAD, content, f"2025-04-04T12:3{number}:00Z", meta)  # type: ignore[arg-type]
    if vote is not None:
        store.record_vote(
            THREAD, Vote(4, "U0ASKER", vote), "Feedback", "2025-04-04T12:40:00Z", EntryMeta()
        )


def history_call(reasoning: str = "Context first") -> tuple[str, dict[str, object]]:
    return ("getThreadHistory", {"reasoning": reasoning})


def post_call(text: str = POST) -> tuple[str, dict[str, object]]:
    return ("postMessage", {"text": text, "reasoning": "A suggestion"})
