"""The `assistant` command line: one entry point, one module per group of commands."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from assistant.commands import (
    CliError,
    channels,
    check,
    demo,
    eval,
    logs,
    mcp,
    memory,
    replay,
    routines,
    slack,
    threads,
    usage,
)
from assistant.telemetry.setup import TelemetryError
from context.storage import StoreUnavailable

DISTRIBUTION = "slack-context-assistant"  # the name in pyproject.toml


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="assistant",
        description="A Slack assistant whose threads are structured context logs.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    groups = (
        logs,
        threads,
        usage,
        channels,
        memory,
        routines,
        mcp,
        slack,
        check,
        replay,
        eval,
        demo,
    )
    for group in groups:
        group.register(commands)
    return parser


def _version() -> str:
    """The installed package's version (pyproject.toml's, as pip installed it)."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    # Emoji and non-ASCII text must print whatever the locale says.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8")
    args = build_parser().parse_args(argv)
    try:
        status: int = args.handler(args)  # each command's handler says its exit status
        return status
    except (CliError, StoreUnavailable, TelemetryError) as exc:
        # StoreUnavailable: `run`, `serve` and `demo` open the store deep inside the app; its
        # one line is the whole story (where, password hidden, and the driver's reason).
        print(f"assistant {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`assistant show log.json | head`): stop quietly, as Unix
        # tools do, and keep Python's exit-time flush from failing on the same pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by it


if __name__ == "__main__":
    sys.exit(main())
