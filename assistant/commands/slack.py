"""Commands that run the assistant: run (Socket Mode), serve (HTTP)."""

from __future__ import annotations

import argparse

from assistant.commands import CliError
from assistant.settings import Mode, Settings, SettingsError, load_settings


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


def _settings(mode: Mode) -> Settings:
    try:
        return load_settings(mode)
    except SettingsError as exc:
        raise _settings_error("the settings are incomplete", exc) from None


def _settings_error(headline: str, exc: SettingsError) -> CliError:
    lines = "\n".join(f"  {line}" for line in str(exc).splitlines())
    return CliError(f"{headline}:\n{lines}\nSee README.md, Configuration.")


def run_socket(args: argparse.Namespace) -> int:
    from assistant.serving.socket_mode import run

    settings = _settings("socket")
    try:
        run(settings)
    except SettingsError as exc:
        raise _settings_error("Slack refused a token", exc) from None
    return 0


def run_serve(args: argparse.Namespace) -> int:
    from assistant.serving.http import serve

    settings = _settings("http")
    try:
        serve(settings, host=args.host)
    except SettingsError as exc:
        raise _settings_error("Slack refused a token", exc) from None
    return 0

