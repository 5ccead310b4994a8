"""`assistant eval verdicts` (and `assistant usage --judged`): what the live judge said of the
answers it judged (ASSISTANT_JUDGE_SAMPLE), by channel and answering model; `--recent N` the
newest verdicts with their reasons (docs/evaluation.md, "Watching live quality")."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from typing import Any

from assistant.commands import CliError, when
from assistant.commands.io import one_line
from assistant.commands.stored import existing_store
from assistant.model.judging import LIVE_VERDICTS
from context.render import printable
from context.storage import VerdictCount, VerdictRow

FAILED = "failed"  # no verdict: the judge could not be asked, or gave none
COLUMNS = (*LIVE_VERDICTS, FAILED)
MAX_RECENT = 1_000


def register(parser: argparse.ArgumentParser) -> None:
    """The options of `eval verdicts` (`usage --judged` takes --since, --until and --json)."""
    parser.add_argument(
        "--since", metavar="WHEN", type=when.since, help="only verdicts given at or after WHEN"
    )
    parser.add_argument(
        "--until", metavar="WHEN", type=when.since, help="only verdicts given before WHEN"
    )
    parser.add_argument("--json", action="store_true", help="the report as one JSON object")
    parser.add_argument(
        "--recent",
        metavar="N",
        type=_recent,
        help=f"also the newest N verdicts (at most {MAX_RECENT}), each with the judge's reason",
    )
    parser.set_defaults(handler=run_verdicts)


def _recent(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_RECENT:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_RECENT}, not {value}")
    return value


@dataclass
class Line:
    """A channel's answers by one model: how many the judge gave each verdict."""

    team: str
    channel: str
    model: str | None
    judges: set[str] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COLUMNS, 0))

    @property
    def judged(self) -> int:
        return sum(self.counts.values())

    @property
    def good_share(self) -> float | None:
        given = self.judged - self.counts[FAILED]
        return self.counts["good"] / given if given else None

    def as_dict(self) -> dict[str, Any]:
        share = self.good_share
        return {
            "workspace": self.team,
            "channel": self.channel,
            "model": self.model,
            "judges": sorted(self.judges),
            "judged": self.judged,
            **self.counts,
            "good_share": None if share is None else round(share, 4),
        }


def lines_of(counts: list[VerdictCount]) -> list[Line]:
    """One line per channel and answering model, most judged first."""
    found: dict[tuple[str, str, str | None], Line] = {}
    for count in counts:
        line = found.setdefault(
            (count.team, count.channel, count.model), Line(count.team, count.channel, count.model)
        )
        line.judges.add(count.judge_model)
        column = count.verdict if count.verdict in LIVE_VERDICTS else FAILED
        line.counts[column] += count.count
    return sorted(found.values(), key=lambda line: (-line.judged, line.team, line.channel))


def run_verdicts(args: argparse.Namespace) -> int:
    if args.since is not None and args.until is not None and args.since >= args.until:
        raise CliError(
            f"--since {when.shown(args.since)} is not before --until {when.shown(args.until)}"
        )
    recent_count = getattr(args, "recent", None)
    with existing_store("usage" if getattr(args, "judged", False) else "eval") as store:
        lines = lines_of(store.verdict_counts(args.since, args.until))
        recent = store.recent_verdicts(recent_count, args.since) if recent_count else []
    if args.json:
        document = {
            "since": when.shown(args.since) if args.since else None,
            "until": when.shown(args.until) if args.until else None,
            "lines": [line.as_dict() for line in lines],
            "recent": [_recent_dict(row) for row in recent],
        }
        # printable: every character it escapes is one JSON reads back as it was.
        print(printable(json.dumps(document, ensure_ascii=False)))
        return 0
    _print_table(lines)
    for row in recent:
        shown = f"{row.key}@{row.answer}"
        verdict = row.verdict or FAILED
        print(one_line(f"{row.judged_at[:19]}  {shown}  {verdict}: {row.reason or ''}"))
    return 0


def _recent_dict(row: VerdictRow) -> dict[str, Any]:
    return {
        "thread": str(row.key),
        "answer": row.answer,
        "judged_at": row.judged_at,
        "model": row.model,
        "judge_model": row.judge_model,
        "verdict": row.verdict,
        "reason": row.reason,
    }


def _print_table(lines: list[Line]) -> None:
    head = ["channel", "model", "judged", *COLUMNS, "good share"]
    rows = [head]
    for line in lines:
        share = line.good_share
        rows.append(
            [
                one_line(f"{line.team}/{line.channel}"),
                one_line(line.model or "(unknown)"),
                str(line.judged),
                *(str(line.counts[name]) for name in COLUMNS),
                "-" if share is None else f"{share:.2f}",
            ]
        )
    widths = [max(len(row[n]) for row in rows) for n in range(len(head))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    total = sum(line.judged for line in lines)
    print(f"{total} answers judged" + ("" if total else " (ASSISTANT_JUDGE_SAMPLE is 0?)"))
