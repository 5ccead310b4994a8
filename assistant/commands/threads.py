"""Commands on the store: threads, export."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError

from assistant.commands import CliError
from assistant.commands.io import write_output
from assistant.settings import SettingsError, load_store_settings
from context.canonical import export_json
from context.storage import Store, ThreadKey, database_url, open_store


def register(commands: argparse._SubParsersAction) -> None:
    threads = commands.add_parser(
        "threads",
        help="list the threads in the store",
        description="List every thread in the store (DATABASE_URL), most recent first: "
        "its id TEAM/CHANNEL/THREAD_TS, entry count, last update, token totals and feedback "
        "(the people's latest votes on its answers).",
    )
    threads.set_defaults(handler=run_threads)

    export = commands.add_parser(
        "export",
        help="write one thread's log as JSON",
        description="Write a thread's context log as canonical, indented JSON.",
    )
    export.add_argument("thread", metavar="THREAD", help="a thread id TEAM/CHANNEL/THREAD_TS")
    export.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    export.add_argument(
        "--with-metadata",
        action="store_true",
        help="write {thread, totals, log, metadata, panel, feedback} instead of the bare log: "
        "each entry's side metadata (Slack ts, event id, model, token usage, latency), the token "
        "totals, the assistant panel's (who opened it, what they view, the title; null for "
        "other threads) and the feedback votes",
    )
    export.set_defaults(handler=run_export)

    purge = commands.add_parser(
        "purge",
        help="delete threads not updated for DAYS days",
        description="Delete every thread whose last entry was recorded more than DAYS days ago: "
        "its whole log, side metadata and remembered Slack messages. Prints each thread "
        "deleted. For workspaces that must not keep conversations forever.",
    )
    purge.add_argument(
        "--older-than", metavar="DAYS", type=_days, required=True, help="age in days (> 0)"
    )
    purge.add_argument(
        "--dry-run", action="store_true", help="only list the threads that would be deleted"
    )
    purge.set_defaults(handler=run_purge)


def _days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of days: {text!r}") from None
    if not days > 0 or days == float("inf"):
        raise argparse.ArgumentTypeError(f"DAYS must be a positive number, not {text!r}")
    return days


@contextmanager
def _store() -> Iterator[Store]:
    try:
        url = load_store_settings().database_url
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    try:
        store = open_store(url)
    except SQLAlchemyError as exc:
        where = database_url(url).render_as_string(hide_password=True)
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        raise CliError(f"cannot open the store at {where}: {reason}") from None
    try:
        yield store
    finally:
        store.close()


def run_threads(args: argparse.Namespace) -> int:
    with _store() as store:
        for summary in store.threads():
            tokens = summary.prompt_tokens + summary.completion_tokens
            print(
                f"{summary.key}\t{summary.entries} entries\tupdated {summary.updated_at}"
                f"\t{tokens} tokens (prompt {summary.prompt_tokens}, cached "
                f"{summary.cached_tokens}, completion {summary.completion_tokens})"
                f"\tfeedback {summary.good_votes} good, {summary.bad_votes} bad"
            )
    return 0


def run_purge(args: argparse.Namespace) -> int:
    cutoff = datetime.now(UTC) - timedelta(days=args.older_than)
    with _store() as store:
        keys = store.purge(cutoff, dry_run=args.dry_run)
    verb = "would delete" if args.dry_run else "deleted"
    for key in keys:
        print(f"{verb}\t{key}")
    print(f"{verb} {len(keys)} thread(s) not updated since {cutoff:%Y-%m-%dT%H:%M:%SZ}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    try:
        key = ThreadKey.parse(args.thread)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    with _store() as store:
        if not store.has_thread(key):
            raise CliError(f"no thread {key} in the store (see `assistant threads`)")
        entries = store.entries(key)
        if not args.with_metadata:
            write_output(export_json(entries), args.out)
            return 0
        metadata = [asdict(meta) for meta in store.metadata(key)]
        panel = store.panel(key)
        votes = store.votes(key)
        document = {
            "thread": str(key),
            "totals": {
                name: sum(meta[name] or 0 for meta in metadata)
                for name in ("prompt_tokens", "cached_tokens", "completion_tokens")
            },
            "log": [entry.as_dict() for entry in entries],
            "metadata": metadata,
            "panel": asdict(panel) if panel is not None else None,
            "feedback": {
                "good": sum(vote.vote == "good" for vote in votes),
                "bad": sum(vote.vote == "bad" for vote in votes),
                "votes": [asdict(vote) for vote in votes],
            },
        }
        write_output(json.dumps(document, ensure_ascii=False, indent=2) + "\n", args.out)
    return 0
