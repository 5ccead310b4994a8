"""Commands on saved log files: show, validate, schema."""

from __future__ import annotations

import argparse
import json
import sys

from assistant.commands import CliError
from assistant.commands.io import file_or_thread, read_input
from assistant.commands.watch import first_shown, show_thread
from context.render import render_log, wants_colour
from context.schema import log_json_schema
from context.storage import ThreadKey
from context.validate import Problem, validate_log


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
    report = validate_log(read_input(source))
    if report.problems:
        _print_problems(_source(args.file), report.problems)
        return 1
    entries = report.entries[first_shown(report.entries, args.start) :]
    sys.stdout.write(render_log(entries, colour=wants_colour(sys.stdout)))
    return 0


def run_validate(args: argparse.Namespace) -> int:
    report = validate_log(read_input(args.file))
    if report.problems:
        _print_problems(_source(args.file), report.problems)
        noun = "problem" if len(report.problems) == 1 else "problems"
        print(f"{_source(args.file)}: {len(report.problems)} {noun}", file=sys.stderr)
        return 1
    print(f"{_source(args.file)}: valid, {len(report.entries)} entries")
    return 0


def run_schema(args: argparse.Namespace) -> int:
    print(json.dumps(log_json_schema(), indent=2, ensure_ascii=False))
    return 0


def _source(path: str) -> str:
    return "<stdin>" if path == "-" else path
