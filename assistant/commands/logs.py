"""Commands on saved log files: show, validate, schema."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable

from assistant.commands import CliError
from assistant.commands.io import file_or_thread, read_log_text
from assistant.commands.watch import first_shown_of, show_thread
from context.entry import Entry
from context.render import render_entry, wants_colour
from context.schema import log_json_schema
from context.storage import ThreadKey
from context.validate import Problem, entries_at, scan_log, validate_log


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    show = commands.add_parser(
        "show",
        help="render a saved log or a stored thread as the console trace",
        description="Render a context log in the emoji trace format: a saved file, or a "
        "thread of the store (DATABASE_URL), which --follow keeps printing as any process "
        "records in it, until Ctrl-C.",
    )
    show.add_argument(
        "file",
        metavar="FILE|THREAD",
        help="a log file, - for standard input, or a thread id TEAM/CHANNEL/THREAD_TS "
        "(a file wins over a thread id of the same name)",
    )
    show.add_argument(
        "--from",
        dest="start",
        metavar="INDEX",
        type=int,
        default=0,
        help="start at entry INDEX (negative: that many entries before the end)",
    )
    show.add_argument(
        "--follow",
        action="store_true",
        help="a stored thread only: keep printing its new entries until Ctrl-C",
    )
    show.set_defaults(handler=run_show)

    validate = commands.add_parser(
        "validate",
        help="check a saved log and list every problem",
        description="Check a context log; print every problem with its entry and field. "
        "Exit status 0 when valid, 1 when not.",
    )
    validate.add_argument("file", metavar="FILE", help="a log file, or - for standard input")
    validate.set_defaults(handler=run_validate)

    schema = commands.add_parser(
        "schema",
        help="print the JSON Schema (2020-12) of the log format",
        description="Print the JSON Schema (draft 2020-12) of the context log format.",
    )
    schema.set_defaults(handler=run_schema)


def _print_problems(source: str, problems: list[Problem]) -> None:
    for problem in problems:
        print(f"{source}: {problem}", file=sys.stderr)


def run_show(args: argparse.Namespace) -> int:
    source = file_or_thread(args.file)
    if isinstance(source, ThreadKey):
        return show_thread(source, args.start, args.follow, sys.stdout)
    if args.follow:
        raise CliError("--follow watches a stored thread TEAM/CHANNEL/THREAD_TS, not a file")
    text = read_log_text(source)
    scan = scan_log(text)  # every problem before any line of the trace
    if scan.problems:
        _print_problems(_source(args.file), scan.problems)
        return 1
    if scan.starts is None:  # read whole (see scan_log): its entries, as validate gives them
        entries: Iterable[Entry] = validate_log(text).entries[
            first_shown_of(scan.count, args.start) :
        ]
    else:
        entries = entries_at(text, scan.starts[first_shown_of(scan.count, args.start) :])
    # An entry at a time, as render_log joins them: a long log is never one string.
    colour = wants_colour(sys.stdout)
    shown = False
    for entry in entries:
        sys.stdout.write(("\n\n" if shown else "") + render_entry(entry, colour))
        shown = True
    if shown:
        sys.stdout.write("\n")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    scan = scan_log(read_log_text(args.file))
    if scan.problems:
        _print_problems(_source(args.file), scan.problems)
        noun = "problem" if len(scan.problems) == 1 else "problems"
        print(f"{_source(args.file)}: {len(scan.problems)} {noun}", file=sys.stderr)
        return 1
    print(f"{_source(args.file)}: valid, {scan.count} entries")
    return 0


def run_schema(args: argparse.Namespace) -> int:
    print(json.dumps(log_json_schema(), indent=2, ensure_ascii=False))
    return 0


def _source(path: str) -> str:
    return "<stdin>" if path == "-" else path
