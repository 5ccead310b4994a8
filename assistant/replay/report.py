"""The report of `assistant replay … --report FILE`: per input, where the log was cut, what the
recorded log did next and what the replay did; then a summary. Markdown for people, or JSON
Lines (a `.jsonl` file) for scripts: one object per input, then `{"summary": …}`."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from context.entry import FAILURE_PREFIX, RUN_ENDS, AssistantEntry, Entry, SystemEntry, UserEntry
from context.render import printable
from context.storage import EntryMeta
from context.toolcalls import FinishRequest, PostMessage

Status = Literal["ran", "failed", "not run"]
TOKENS = ("prompt_tokens", "cached_tokens", "completion_tokens")


@dataclass(frozen=True)
class Side:
    """What one side did after the cut: its entries and, when known, their side metadata."""

    entries: Sequence[Entry] = ()
    metadata: Sequence[EntryMeta] | None = None  # None: not known (a log file has none)

    @property
    def calls(self) -> list[str]:
        return [e.content.toolCall for e in self.entries if isinstance(e, AssistantEntry)]

    @property
    def texts(self) -> list[str]:
        return [
            e.content.text
            for e in self.entries
            if isinstance(e, AssistantEntry) and isinstance(e.content, PostMessage)
        ]

    @property
    def errors(self) -> list[str]:
        return [
            e.content
            for e in self.entries
            if isinstance(e, SystemEntry) and e.content.startswith(FAILURE_PREFIX)
        ]

    @property
    def steps(self) -> int | None:
        """Model calls answered: each reply's usage is kept with the first entry it made."""
        if self.metadata is None:
            return None
        return sum(1 for meta in self.metadata if meta.model is not None)

    @property
    def tokens(self) -> dict[str, int] | None:
        if self.metadata is None:
            return None
        return {name: sum(getattr(m, name) or 0 for m in self.metadata) for name in TOKENS}

    @property
    def ended(self) -> str:
        last = self.entries[-1] if self.entries else None
        if last is None:
            return "nothing (the log ends there)"
        if isinstance(last, SystemEntry) and ends_run(last):
            return last.content.split(". ")[0]  # the reason, without who was told
        return "finishRequest" if ends_run(last) else "the log ends"

    def as_json(self) -> dict[str, Any]:
        return {
            "entries": [e.as_dict() for e in self.entries],
            "calls": self.calls,
            "texts": self.texts,
            "steps": self.steps,
            "tokens": self.tokens,
            "errors": self.errors,
            "ended": self.ended,
        }


@dataclass(frozen=True)
class Outcome:
    """One input of the report."""

    source: str  # the input as given: a file, `-`, or a thread id
    at: int | None  # the cut: the entries before it were sent; None: the whole log
    log_entries: int = 0  # entries in the input's log
    asked: Entry | None = None  # the last person's message before the cut
    recorded: Side = field(default_factory=Side)
    replay: Side | None = None  # None: the replay did not run
    status: Status = "not run"
    problem: str | None = None  # why it failed or did not run

    def as_json(self) -> dict[str, Any]:
        return {
            "input": self.source,
            "at": self.at,
            "log_entries": self.log_entries,
            "asked": self.asked.as_dict() if self.asked else None,
            "status": self.status,
            "problem": self.problem,
            "recorded": self.recorded.as_json(),
            "replay": self.replay.as_json() if self.replay else None,
        }


def recorded_next(entries: Sequence[Entry], at: int) -> list[Entry]:
    """What the recorded log did after the cut: the entries from `at` through the first one
    that ends a run (finishRequest, `Stopped after …`, `Error: …`, the stop button's
    `Stopped: …`), or to the log's end."""
    taken = []
    for entry in entries[at:]:
        taken.append(entry)
        if ends_run(entry):
            break
    return taken


def ends_run(entry: Entry) -> bool:
    if isinstance(entry, AssistantEntry):
        return isinstance(entry.content, FinishRequest)
    return isinstance(entry, SystemEntry) and entry.content.startswith(RUN_ENDS)


def last_asked(entries: Sequence[Entry]) -> Entry | None:
    return next((e for e in reversed(entries) if isinstance(e, UserEntry)), None)


@dataclass(frozen=True)
class Summary:
    outcomes: Sequence[Outcome]

    def counts(self) -> dict[Status, int]:
        return {
            status: sum(o.status == status for o in self.outcomes)
            for status in ("ran", "failed", "not run")
        }

    def same_calls(self) -> tuple[int, int]:
        """Of the replays beside a recorded continuation, how many made the same tool calls."""
        compared = [o for o in self.outcomes if o.replay is not None and o.recorded.entries]
        return sum(o.replay.calls == o.recorded.calls for o in compared if o.replay), len(compared)

    def tokens(self, side: Literal["recorded", "replay"]) -> dict[str, int] | None:
        sides = [o.recorded if side == "recorded" else o.replay for o in self.outcomes]
        known = [s.tokens for s in sides if s is not None and s.tokens is not None]
        if not known:
            return None
        return {name: sum(t[name] for t in known) for name in TOKENS}

    def line(self) -> str:
        counts = self.counts()
        same, compared = self.same_calls()
        text = (
            f"{len(self.outcomes)} input(s): {counts['ran']} replayed, {counts['failed']} "
            f"failed, {counts['not run']} not run"
        )
        if compared:
            text += f"; same tool calls as recorded in {same} of {compared}"
        replay = self.tokens("replay")
        if replay is not None:
            text += f"; replay tokens {_tokens(replay)}"
        recorded = self.tokens("recorded")
        if recorded is not None:
            text += f"; recorded tokens {_tokens(recorded)}"
        return text + "."

    def as_json(self) -> dict[str, Any]:
        same, compared = self.same_calls()
        return {
            "summary": {
                "inputs": len(self.outcomes),
                **{key.replace(" ", "_"): value for key, value in self.counts().items()},
                "same_calls": same,
                "compared": compared,
                "replay_tokens": self.tokens("replay"),
                "recorded_tokens": self.tokens("recorded"),
                "line": self.line(),
            }
        }


def jsonl_report(outcomes: Sequence[Outcome]) -> str:
    lines = [o.as_json() for o in outcomes] + [Summary(outcomes).as_json()]
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def markdown_report(outcomes: Sequence[Outcome], model: str, persona: str) -> str:
    cuts = sorted({o.at for o in outcomes if o.at is not None})
    cut = f"before entry {cuts[0]}" if cuts else "none (each whole log)"
    out = [
        "# Replay report",
        "",
        f"- date: {datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}",
        f"- model: {_inline(model)}",
        f"- persona: {_inline(persona)}",
        f"- cut: {cut}",
        "",
    ]
    for number, outcome in enumerate(outcomes, 1):
        out += _section(number, outcome)
    out += ["## Summary", "", Summary(outcomes).line(), ""]
    return "\n".join(out)


def _section(number: int, o: Outcome) -> list[str]:
    out = [f"## {number}. {_inline(o.source)}", ""]
    if o.status == "not run":
        return [*out, f"Not run: {_inline(o.problem or 'unknown')}", ""]
    sent = o.at if o.at is not None else o.log_entries
    where = f"Cut before entry {o.at}" if o.at is not None else "The whole log"
    out.append(f"{where}: entries 0 to {sent - 1} sent (of {o.log_entries}).")
    if isinstance(o.asked, UserEntry):
        text = _quoted(o.asked.content.text)
        who = _inline(o.asked.content.userid)
        out.append(f"Last message before it: entry {o.asked.index}, {who}:")
        out += ["", *_fenced([text])]
    if o.problem:
        out += ["", f"The replay failed: {_inline(o.problem)}"]
    replay = o.replay or Side()
    rows = [
        ("entries", _count(o.recorded), _count(replay)),
        ("tool calls", ", ".join(o.recorded.calls) or "—", ", ".join(replay.calls) or "—"),
        ("steps", _maybe(o.recorded.steps), _maybe(replay.steps)),
        (
            "tokens (prompt / cached / completion)",
            _tokens(o.recorded.tokens),
            _tokens(replay.tokens),
        ),
        ("errors", str(len(o.recorded.errors)), str(len(replay.errors))),
        ("ended", _inline(o.recorded.ended), _inline(replay.ended)),
    ]
    out += ["", "| | recorded | replay |", "|---|---|---|"]
    out += [f"| {name} | {a} | {b} |" for name, a, b in rows]
    for title, side in (("Recorded next", o.recorded), ("Replay", replay)):
        if side.entries:
            out += ["", f"{title}:", "", *_fenced([_describe(e) for e in side.entries])]
    return [*out, ""]


def _describe(entry: Entry) -> str:
    """One entry on one line: control characters and line breaks escaped by JSON."""
    if isinstance(entry, UserEntry):
        text = _quoted(entry.content.text)
        return f"{entry.index} 👤 {_one_line(entry.content.userid)}: {text}"
    if isinstance(entry, SystemEntry):
        return f"{entry.index} 🧠 {_quoted(entry.content)}"
    assert isinstance(entry, AssistantEntry)
    arguments = entry.content.model_dump(mode="json", exclude_none=True)
    name = arguments.pop("toolCall")
    arguments.pop("reasoning", None)
    shown = printable(json.dumps(arguments, ensure_ascii=False)) if arguments else ""
    return f"{entry.index} 🤖 {_one_line(name)} {shown}".rstrip()


def _fenced(lines: list[str]) -> list[str]:
    """A code block whose fence is longer than any run of backticks inside it."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", *lines, fence]


# What a log holds (ids, texts) is anyone's words: only these put it in the report, on one
# line, with C0, DEL, C1 and bidi controls escaped, so it cannot forge a `## Summary` heading.
def _quoted(text: str) -> str:
    """A JSON string, with what JSON leaves raw (DEL, C1, bidi controls) escaped too."""
    return printable(json.dumps(text, ensure_ascii=False))


def _one_line(text: str) -> str:
    return _quoted(text)[1:-1]


def _inline(text: str) -> str:
    """Text for a table cell, a heading or a line of prose: one line, no table pipes."""
    return _one_line(text).replace("|", "\\|")


def _count(side: Side) -> str:
    if not side.entries:
        return "0"
    first, last = side.entries[0].index, side.entries[-1].index
    return f"{len(side.entries)} ({first} to {last})" if first != last else f"1 ({first})"


def _maybe(value: int | None) -> str:
    return "—" if value is None else str(value)


def _tokens(tokens: dict[str, int] | None) -> str:
    if tokens is None:
        return "—"
    return " / ".join(f"{tokens[name]:,}" for name in TOKENS)
