"""Commands on saved log files: show, validate, schema."""

from __future__ import annotations

import argparse
import json
import sys

from assistant.commands.io import read_input
from context.render import render_log, wants_colour
from context.schema import log_json_schema
from context.validate import Problem, validate_log


def register(commands: argparse._SubParsersAction) -> None:
    show = commands.add_parser(
        "show",
        help="render a saved log as the console trace",
        description="Render a saved context log in the emoji trace format.",
    )
    show.add_argument("file", metavar="FILE", help="a log file, or - for standard input")
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
    report = validate_log(read_input(args.file))
    if report.problems:
        _print_problems(_source(args.file), report.problems)
        return 1
    sys.stdout.write(render_log(report.entries, colour=wants_colour(sys.stdout)))
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
