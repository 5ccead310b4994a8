"""`assistant demo`: see the bot work, with no Slack workspace and no OpenAI key."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from assistant.commands import CliError
from assistant.settings.environment import SettingsError, load_store_settings
from context.storage import database_url
from context.urls import shown_url

if TYPE_CHECKING:
    from assistant.serving.demo import RealModel

EXPECTED_ANSWERS = 2  # the demo's conversation: a mention, then a follow-up


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = commands.add_parser(
        "demo",
        help="play a short conversation on local fakes of Slack and the model",
        description="Start a fake Slack and a scripted fake model on loopback, run the bot "
        "against them, play a short conversation in a thread (a mention that makes the bot "
        "read the thread's history, then a follow-up) and print its trace. The thread stays "
        "in the store, for threads, show, export and replay. Needs no Slack or OpenAI "
        "variable, and never uses them.",
    )
    demo.add_argument(
        "--model-url",
        metavar="URL",
        help="play the conversation against this OpenAI-compatible server (its /v1 URL: "
        "llama.cpp, vLLM, Ollama…) instead of the scripted model; OPENAI_API_KEY is sent "
        "when set; needs --model",
    )
    demo.add_argument("--model", metavar="NAME", help="the model to ask, with --model-url")
    demo.add_argument(
        "--database",
        metavar="URL",
        help="the store to leave the thread in: a database URL or a SQLite file "
        "(default: DATABASE_URL, else assistant.db in the current directory)",
    )
    demo.set_defaults(handler=run_demo)


def _database(option: str | None) -> tuple[str, bool]:
    """The store's URL, and whether the other commands need to be told it."""
    if option:
        url = option if "://" in option else f"sqlite:///{Path(option).resolve()}"
        return url, True
    try:
        return load_store_settings().database_url, False
    except SettingsError as exc:
        raise CliError(str(exc)) from None


def _told(url: str) -> tuple[str, str]:
    """How the hint names the store: `DATABASE_URL=… ` before each command, or, for a URL
    that may hold a credential (a password, or a query such as `?password=`: never printed),
    a sentence naming where it is (`shown_url`), for the reader to set."""
    parsed = database_url(url)
    if parsed.password is None and not parsed.query:
        return f"DATABASE_URL={shlex.quote(url)} ", ""
    return "", f"With DATABASE_URL set to the store at {shown_url(parsed)} (its URL in full), "


def _real_model(args: argparse.Namespace) -> RealModel | None:
    """The server `--model-url` and `--model` name, checked; None for the scripted model."""
    from assistant.serving.demo import RealModel

    if args.model_url is None and args.model is None:
        return None
    if args.model_url is None or not args.model:
        raise CliError("--model-url and --model go together")
    try:
        parsed = urlsplit(args.model_url)
        host = parsed.hostname
    except ValueError:  # a port that is no number, brackets unclosed
        host = None
    if host is None or parsed.scheme not in ("http", "https"):
        # Never the URL itself: it may hold a key.
        raise CliError("--model-url: not an http(s) URL with a host (such as http://host:8080/v1)")
    key = os.environ.get("OPENAI_API_KEY") or "no-key"  # local servers take any
    return RealModel(args.model_url, args.model, key)


def run_demo(args: argparse.Namespace) -> int:
    from assistant.serving.demo import DemoError
    from assistant.serving.demo import run_demo as play

    real = _real_model(args)
    url, tell = _database(args.database)
    try:
        played = play(url, sys.stdout, real)
    except SettingsError as exc:
        raise CliError(f"the settings are wrong:\n{exc}") from None
    except DemoError as exc:
        print(f"assistant demo: {exc}", file=sys.stderr)
        return 1
    thread = played.thread
    prefix, where = _told(url) if tell else ("", "")
    apologies = len(played.failures)
    said = f"{played.answers} answers" + (f" and {apologies} apologies" if apologies else "")
    print(
        f"\nassistant demo: {said} in thread {thread}, kept in the store. "
        f"{where}Try:\n"
        f"  {prefix}assistant threads\n"
        f"  {prefix}assistant show {thread}\n"
        f"  {prefix}assistant export {thread} --with-metadata\n"
        f"  {prefix}assistant replay {thread} --at 2 --demo-model",
        file=sys.stderr,
    )
    # An answer that ended early after its post (a small model at the step cap) is said, not
    # failed: the person got the model's post. An apology alone is no answer.
    for why, count in Counter(played.cut_short).items():
        answers = "answer" if count == 1 else "answers"
        print(f"assistant demo: {count} {answers} ended early: {why}", file=sys.stderr)
    for why, count in Counter(played.failures).items():
        messages = "message" if count == 1 else "messages"
        print(f"assistant demo: {count} {messages} not answered: {why}", file=sys.stderr)
    if played.answers < EXPECTED_ANSWERS:
        print(
            f"assistant demo: expected {EXPECTED_ANSWERS} answers, got {played.answers}",
            file=sys.stderr,
        )
        return 1
    return 0
