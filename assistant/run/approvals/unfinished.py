"""Calls of MCP servers' tools that a run recorded and may have made, and that have no result:
its process stopped during them (a deploy, a crash, a lost lease), or a person pressed stop
(docs/log-format.md#tools-of-mcp-servers). A tool that may change something is never called
twice for one call of the model: the server may have carried the first one out, and only the
model and the person can tell whether to try again. The log says which calls were being made:
a call that needs no approval from the moment its entry is recorded (it is made right after),
one a person allowed from its `Calling …` entry on (assistant/run/approvals/entries.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from assistant.run.approvals.entries import RESULT_PREFIXES
from context.entry import STOP_PREFIX, AssistantEntry, Entry, SystemEntry
from context.toolcalls import FinishRequest, ServerToolCall

UNKNOWN = (
    "Error: {name} (entry {index}) failed: the outcome is unknown ({why}); it was not called again"
)
PROCESS_STOPPED = "the process stopped during the call"
# A call recorded past ASSISTANT_MAX_TOOL_CALLS_PER_REPLY by earlier versions: its result.
_NOT_CARRIED_OUT = "Error: the {name} of entry {index} was not carried out"
_APPROVAL_ASKED = "Approval requested: {name} (entry {index})"
_SIGN_IN_ASKED = "Sign-in requested: {name} (entry {index})"
# What a call's result starts with, or the request for its approval or for a person's sign-in
# (which takes it over).
_ENDS: tuple[str, ...] = (*RESULT_PREFIXES, _NOT_CARRIED_OUT, _APPROVAL_ASKED, _SIGN_IN_ASKED)


def unknown_outcome(name: str, index: int, why: str = PROCESS_STOPPED) -> str:
    """The result of a call that may or may not have been carried out."""
    return UNKNOWN.format(name=name, index=index, why=why)


def stopped_during(user: str) -> str:
    """Why a call being made when the stop button was pressed has no result: the stop
    cancelled the run, and with it the call (the SDK sent the server
    `notifications/cancelled`), but the server may have done part of it."""
    return f"<@{user}> pressed stop during the call, and it was cancelled if still under way"


def unanswered_calls(entries: Sequence[Entry], start: int) -> list[int]:
    """The entries, from index `start` on, of calls of MCP servers' tools that have no
    result and for which no approval was asked: each was being made, or about to be, when
    its run stopped. An answer's end (`finishRequest`, a stop) leaves none open."""
    open_calls: dict[int, tuple[str, ...]] = {}  # index -> what its result starts with
    for entry in entries:
        if entry.index < start:
            continue
        if isinstance(entry, AssistantEntry):
            call = entry.content
            if isinstance(call, FinishRequest):
                open_calls.clear()
            elif isinstance(call, ServerToolCall):
                open_calls[entry.index] = tuple(
                    end.format(name=call.called, index=entry.index) for end in _ENDS
                )
        elif isinstance(entry, SystemEntry):
            if entry.content.startswith(STOP_PREFIX):
                open_calls.clear()
                continue
            for index, ends in list(open_calls.items()):
                if entry.content.startswith(ends):
                    del open_calls[index]
    return sorted(open_calls)
