"""The steps a run shows while it streams (docs/architecture.md#thinking-steps), derived from
the log's entries alone, so a replay of a stored log shows the same ones.

- each tool call other than `postMessage` and `finishRequest` (`getThreadHistory`: "Reading
  the thread"; `expandEntry`: "Reading entry N in full"; `searchSlack`: "Searching Slack for
  …") is one step: `in_progress` until
  its result entry (the first system entry after it) is in the log, then `complete`, or
  `error` when that entry is an `Error: …` (a call the run went on from without a result
  is `complete`); a call that waits for a person's approval is "Waiting for approval: …",
  `in_progress`, until its result, `error` when it was not carried out (denied, expired);
- each message a person's entry links (read while their message was recorded, before the
  run) is one step, "Reading a linked message" with the link as its source: `complete` when
  the entry quotes it, `error` when it has a `(The linked message …)` note instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from assistant.i18n.words import ENGLISH, Words
from assistant.run.approvals.entries import REFUSED_PREFIX, STARTED_PREFIX, WAIT_PREFIXES
from context.entry import FAILURE_PREFIX, AssistantEntry, Entry, SystemEntry, UserEntry
from context.toolcalls import ExpandEntry, FinishRequest, GetThreadHistory, PostMessage, SearchSlack

Status = Literal["in_progress", "complete", "error"]

# Slack's field rules for a task_update chunk (assistant/fakes/slack/chunks.py): a title this
# long at most.
MAX_TITLE = 256
# A linked message, as assistant/intake/references.py finds them (at most 3 per message).
_LINK = re.compile(
    r"<(https://[A-Za-z0-9-]+(?:\.enterprise)?\.slack\.com/archives/[A-Z0-9]+/p\d{16})"
    r"(?:\?[^|>]*)?(?:\|[^>]*)?>"
)
MAX_LINKS = 3
# What references.py writes for each link, in the links' order, after the person's words.
_OUTCOME = re.compile(
    r'^(?:\(The linked message .*\)|You said earlier: ".*|.*(?:<@[A-Z0-9]+>|I) said:)$',
    re.MULTILINE,
)


@dataclass(frozen=True)
class Step:
    """One step as Slack shows it: a task card."""

    id: str
    title: str
    status: Status
    source: str | None = None  # a URL the step read
    source_text: str = "linked message"  # the source's label, in the title's language

    def chunk(self) -> dict[str, Any]:
        """The step as a `task_update` chunk."""
        chunk: dict[str, Any] = {
            "type": "task_update",
            "id": self.id,
            "title": self.title[:MAX_TITLE],
            "status": self.status,
        }
        if self.source is not None:
            chunk["sources"] = [{"type": "url", "url": self.source, "text": self.source_text}]
        return chunk


def steps(entries: Sequence[Entry], first: int = 0, words: Words = ENGLISH) -> list[Step]:
    """The steps of the entries from index `first` on, in the log's order, titled in
    `words`' language (a replay's: English)."""
    found: list[Step] = []
    for position, entry in enumerate(entries):
        if entry.index < first:
            continue
        if isinstance(entry, UserEntry):
            found += _link_steps(entry, words)
        elif isinstance(entry, AssistantEntry):
            title = _title(entry.content, words)
            if title is not None:
                status, waiting = _status(entries[position + 1 :])
                if waiting:
                    tool = getattr(entry.content, "toolCall", "")
                    title = words.gettext("Waiting for approval: {tool}", tool=tool)
                found.append(Step(f"entry-{entry.index}", title, status))
    return found


def _title(call: object, words: Words) -> str | None:
    if isinstance(call, PostMessage | FinishRequest):
        return None  # the answer itself, and the end of the run: not steps
    if isinstance(call, GetThreadHistory):
        return words.gettext("Reading the thread")
    if isinstance(call, ExpandEntry):
        return words.gettext("Reading entry {index} in full", index=call.index)
    if isinstance(call, SearchSlack):
        title = words.gettext("Searching Slack for “{query}”", query=" ".join(call.query.split()))
        return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 2] + "…”"
    name = getattr(call, "toolCall", None)
    if isinstance(name, str):
        return words.gettext("Calling {tool}", tool=name)
    return words.gettext("Calling a tool")


def _status(after: Sequence[Entry]) -> tuple[Status, bool]:
    """The call's status, and whether it waits for a person's approval."""
    waiting = False
    for entry in after:
        if isinstance(entry, AssistantEntry):
            return "complete", False  # the run went on without a result (logs of other bots)
        if isinstance(entry, SystemEntry):
            if entry.content.startswith(WAIT_PREFIXES):
                waiting = True  # not its result: the approval's entries come first
                continue
            if entry.content.startswith(STARTED_PREFIX):
                waiting = False  # allowed, and being made: its result comes next
                continue
            failed = entry.content.startswith((FAILURE_PREFIX, REFUSED_PREFIX))
            return ("error" if failed else "complete"), False
    return "in_progress", waiting


def _link_steps(entry: UserEntry, words: Words) -> list[Step]:
    links = list(dict.fromkeys(_LINK.findall(entry.content.text)))[:MAX_LINKS]
    outcomes = _OUTCOME.findall(entry.content.text)[-len(links) :] if links else []
    return [
        Step(
            f"entry-{entry.index}-link-{number}",
            words.gettext("Reading a linked message"),
            "error" if outcome.startswith("(") else "complete",
            link,
            words.gettext("linked message"),
        )
        for number, (link, outcome) in enumerate(zip(links, outcomes, strict=False))
    ]
