"""What earlier runs did for the requests a run answers: a process killed mid-answer leaves
them owed, and the run that resumes them must not start the caps afresh, or a model that
never finishes and a process that keeps dying would post and call the model without end.

The log holds it all: an answer's entries start after its first owed entry and after the
last `finishRequest` (which ended the previous answer). Its `postMessage` entries marked
posted are what the person saw (the cut, for one posted cut), and each model call is the
entry that carries its figures (`latency_ms`). A run that ended in an `Error:` entry is not
taken as a boundary: telling it apart from a refusal would mean parsing free text, and
counting a little too much only makes the caps stricter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from assistant.run.core.run_context import RunContext
from assistant.run.tools.post_message import cuts_in, posted_text
from context.entry import Entry, SystemEntry
from context.post_refusals import refused_posts
from context.storage.async_store import async_store
from context.toolcalls import FinishRequest, PostMessage

# The result a finishRequest gets, in place of ending the run, when nothing of the answer has
# reached the person and the model has not been told so before: a model ending an answer
# silently is far more often wrong than right, and a person who asked is left with nothing
# (docs/log-format.md, "Tool calls and their results"). Told once: a second finishRequest
# ends the answer.
NOT_FINISHED = (
    "Not finished: nothing of this answer has been posted yet. Answer the newest user "
    "entries with postMessage, then call finishRequest; call finishRequest again to end "
    "without answering."
)


# The reason of the `Error:` entry that ends, with an apology, an answer to a person who asked
# the bot itself (a mention, a DM) whose model insisted on finishing without a post.
NO_ANSWER = "the model ended the answer twice without posting anything"


def silent_finish(entries: Sequence[Entry], start: int) -> Literal["refuse", "end"] | None:
    """What becomes of a finishRequest of the answer from entry `start` on if none of its
    posts was shown (each `postMessage` entry refused: only whitespace, say; a cut one
    counts): refused (NOT_FINISHED) the first time; the second, the answer ends so. None
    when one was."""
    answer = [entry for entry in entries if entry.index >= start]
    refused = refused_posts(answer)
    if any(isinstance(e.content, PostMessage) and e.index not in refused for e in answer):
        return None
    told = any(isinstance(e, SystemEntry) and e.content == NOT_FINISHED for e in answer)
    return "end" if told else "refuse"


def answer_start(entries: Sequence[Entry], first_owed: int) -> int:
    """The index of the first entry of the answer to the requests from `first_owed` on."""
    finished = [e.index for e in entries if isinstance(e.content, FinishRequest)]
    return max([first_owed, *(index + 1 for index in finished)])


async def count_so_far(ctx: RunContext, first_owed: int) -> int:
    """Count in `ctx.posts` what earlier runs of this answer posted; return the model calls
    they made (the steps this run has taken already)."""
    start = answer_start(ctx.log.entries, first_owed)
    entries = ctx.log.entries[start:]
    metas = await async_store(ctx.store).read(ctx.store.metadata, ctx.key, start)
    cuts = cuts_in(entries)
    steps = 0
    for entry, meta in zip(entries, metas, strict=False):
        if meta.latency_ms is not None:
            steps += 1
        if isinstance(entry.content, PostMessage) and meta.slack_ts is not None:
            posted = posted_text(entry, cuts, ctx.words)
            ctx.posts.count_earlier(posted, cut=entry.index in cuts)
    return steps
