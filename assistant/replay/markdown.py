"""The Markdown form of `assistant replay --report` (assistant/replay/report.py holds what it
shows): per input, the cut, what the recorded log did next and what the replay did, each
side's thinking steps (assistant/replay/shown.py), the stops the log records; then a summary."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime

from assistant.replay.report import Outcome, Side, Summary, tokens_text
from assistant.replay.shown import step_line
from context.entry import AssistantEntry, Entry, SystemEntry, UserEntry
from context.render import printable


def markdown_report(outcomes: Sequence[Outcome], model: str, persona: str) -> str:
    cuts = sorted({o.at for o in outcomes if o.at is not None})
    cut = f"before entry {cuts[0]}" if cuts else "none (each whole log)"
    out = [
        "# Replay report",
        "",
        f"- date: {datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}",
        f"- model: {inline(model)}",
        f"- persona: {inline(persona)}",
        f"- cut: {cut}",
        "",
    ]
    for number, outcome in enumerate(outcomes, 1):
        out += _section(number, outcome)
    out += ["## Summary", "", Summary(outcomes).line(), ""]
    return "\n".join(out)


def _section(number: int, o: Outcome) -> list[str]:
    out = [f"## {number}. {inline(o.source)}", ""]
    if o.status == "not run":
        return [*out, f"Not run: {inline(o.problem or 'unknown')}", ""]
    sent = o.at if o.at is not None else o.log_entries
    where = f"Cut before entry {o.at}" if o.at is not None else "The whole log"
    out.append(f"{where}: entries 0 to {sent - 1} sent (of {o.log_entries}).")
    if isinstance(o.asked, UserEntry):
        text = _quoted(o.asked.content.text)
        who = inline(o.asked.content.userid)
        out.append(f"Last message before it: entry {o.asked.index}, {who}:")
        out += ["", *fenced([text])]
    if o.stops:
        # A stopped thread says so, and when, whether the stop is before the cut or after it.
        out += ["", "Stopped in the log:", "", *[f"- {inline(stop.line())}" for stop in o.stops]]
    if o.problem:
        out += ["", f"The replay failed: {inline(o.problem)}"]
    replay = o.replay or Side()
    rows = [
        ("entries", _count(o.recorded), _count(replay)),
        ("tool calls", ", ".join(o.recorded.calls) or "—", ", ".join(replay.calls) or "—"),
        ("steps", _maybe(o.recorded.steps), _maybe(replay.steps)),
        (
            "tokens (prompt / cached / completion)",
            tokens_text(o.recorded.tokens),
            tokens_text(replay.tokens),
        ),
        ("thinking steps", _cards(o.recorded), _cards(replay)),
        ("errors", str(len(o.recorded.errors)), str(len(replay.errors))),
        ("ended", inline(o.recorded.ended), inline(replay.ended)),
    ]
    out += ["", "| | recorded | replay |", "|---|---|---|"]
    out += [f"| {name} | {a} | {b} |" for name, a, b in rows]
    for title, side in (("Recorded next", o.recorded), ("Replay", replay)):
        if side.entries:
            out += ["", f"{title}:", "", *fenced([_describe(e) for e in side.entries])]
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


def fenced(lines: list[str]) -> list[str]:
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


def inline(text: str) -> str:
    """Text for a table cell, a heading or a line of prose: one line, no table pipes."""
    return _one_line(text).replace("|", "\\|")


def _count(side: Side) -> str:
    if not side.entries:
        return "0"
    first, last = side.entries[0].index, side.entries[-1].index
    return f"{len(side.entries)} ({first} to {last})" if first != last else f"1 ({first})"


def _cards(side: Side) -> str:
    return "; ".join(inline(step_line(card)) for card in side.cards) or "—"


def _maybe(value: int | None) -> str:
    return "—" if value is None else str(value)
