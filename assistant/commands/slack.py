"""Commands that run the assistant: run (Socket Mode), serve (HTTP), replay."""

from __future__ import annotations

import argparse
import asyncio
import sys

from assistant.commands import CliError
from assistant.commands.io import read_input, write_output
from assistant.settings import Mode, Settings, SettingsError, load_settings
from context.canonical import export_json
from context.validate import validate_log


def register(commands: argparse._SubParsersAction) -> None:
    run = commands.add_parser(
        "run",
        help="run the bot in Socket Mode (development, no public URL)",
        description="Connect to Slack over Socket Mode and answer in threads. Needs "
        "SLACK_BOT_TOKEN, SLACK_APP_TOKEN and OPENAI_API_KEY.",
    )
    run.set_defaults(handler=run_socket)

    serve = commands.add_parser(
        "serve",
        help="run the bot as an HTTP server (production)",
        description="Serve Slack's Events API at /slack/events and a health check at "
        "/healthz on PORT. Needs SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET and OPENAI_API_KEY.",
    )
    serve.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    serve.set_defaults(handler=run_serve)

    replay = commands.add_parser(
        "replay",
        help="send a saved log to the model and show what it does next",
        description="Send a saved log to the configured model and print, as a trace, the "
        "entries it adds. Nothing is sent to Slack. Needs OPENAI_API_KEY.",
    )
    replay.add_argument("file", metavar="FILE", help="a log file, or - for standard input")
    replay.add_argument("--out", metavar="FILE", help="also write the extended log to FILE")
    replay.set_defaults(handler=run_replay)


def _settings(mode: Mode) -> Settings:
    try:
        return load_settings(mode)
    except SettingsError as exc:
        raise _settings_error("the settings are incomplete", exc) from None


def _settings_error(headline: str, exc: SettingsError) -> CliError:
    lines = "\n".join(f"  {line}" for line in str(exc).splitlines())
    return CliError(f"{headline}:\n{lines}\nSee README.md, Configuration.")


def run_socket(args: argparse.Namespace) -> int:
    from assistant.socket_mode import run

    settings = _settings("socket")
    try:
        run(settings)
    except SettingsError as exc:
        raise _settings_error("Slack refused a token", exc) from None
    return 0


def run_serve(args: argparse.Namespace) -> int:
    from assistant.http import serve

    settings = _settings("http")
    try:
        serve(settings, host=args.host)
    except SettingsError as exc:
        raise _settings_error("Slack refused a token", exc) from None
    return 0


def run_replay(args: argparse.Namespace) -> int:
    from assistant.agent import FAILURE_PREFIX
    from assistant.replay import replay
    from context.log import ContextLog

    settings = _settings("replay")
    report = validate_log(read_input(args.file))
    if report.problems:
        for problem in report.problems:
            print(f"{args.file}: {problem}", file=sys.stderr)
        return 1
    entries = asyncio.run(replay(settings, ContextLog(report.entries)))
    if args.out:
        write_output(export_json(entries), args.out)
    last = entries[-1]
    failed = last.role == "system" and str(last.content).startswith(FAILURE_PREFIX)
    if len(entries) > len(report.entries) and failed:
        # The run ended on a failure (the model could not be asked): the trace and the saved
        # log say why; a script calling replay should see it too.
        print(f"replay: the run failed (entry {last.index})", file=sys.stderr)
        return 1
    return 0
