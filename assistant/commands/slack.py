"""Commands that run the assistant: run (Socket Mode), serve (HTTP), worker (runs only)."""

from __future__ import annotations

import argparse

from assistant.commands import CliError
from assistant.settings.environment import Mode, Settings, SettingsError, load_settings


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    serve.add_argument(
        "--runs",
        choices=("on", "off"),
        default="on",
        help="off: the ingress role, which acknowledges and records events and leaves every "
        "answer to `assistant worker` processes (PostgreSQL only; default on: both)",
    )
    serve.set_defaults(handler=run_serve)

    worker = commands.add_parser(
        "worker",
        help="answer the threads owed an answer, for `serve --runs off` (PostgreSQL only)",
        description="Run the threads owed an answer, woken by PostgreSQL as `assistant serve "
        "--runs off` records them; serves no HTTP. Needs SLACK_BOT_TOKEN, OPENAI_API_KEY and a "
        "PostgreSQL DATABASE_URL.",
    )
    worker.set_defaults(handler=run_worker)


def _settings(mode: Mode) -> Settings:
    try:
        return load_settings(mode)
    except SettingsError as exc:
        raise _settings_error("the settings are incomplete", exc) from None


def _settings_error(headline: str, exc: SettingsError) -> CliError:
    lines = "\n".join(f"  {line}" for line in str(exc).splitlines())
    return CliError(f"{headline}:\n{lines}\nSee docs/configuration.md.")


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
    from assistant.serving.web_server import PortUnavailable
    from assistant.serving.worker import split_roles_problem, token_source_problem

    settings = _settings("http")
    if args.runs == "off" and (problem := split_roles_problem(settings)):
        raise CliError(f"--runs off: {problem}")
    if problem := token_source_problem(settings):
        raise CliError(problem)
    try:
        serve(settings, host=args.host, runs=args.runs == "on")
    except SettingsError as exc:
        raise _settings_error("Slack refused a token", exc) from None
    except PortUnavailable as exc:
        raise CliError(str(exc)) from None
    return 0


def run_worker(args: argparse.Namespace) -> int:
    from assistant.serving.worker import split_roles_problem, token_source_problem, work

    settings = _settings("worker")
    if problem := split_roles_problem(settings) or token_source_problem(settings):
        raise CliError(problem)
    try:
        work(settings)
    except SettingsError as exc:
        raise _settings_error("Slack refused a token", exc) from None
    return 0
