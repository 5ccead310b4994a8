"""Commands on the store: threads, export."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from assistant.commands import CliError, when
from assistant.commands.io import redaction_key_path, write_output, write_redaction_key
from assistant.commands.stored import existing_store
from context.canonical import export_json
from context.redaction import Redactor
from context.storage import ThreadKey


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    threads = commands.add_parser(
        "threads",
        help="list the threads in the store",
        description="List every thread in the store (DATABASE_URL), most recent first: "
        "its id TEAM/CHANNEL/THREAD_TS, entry count, last update, token totals and feedback "
        "(the people's latest votes on its answers).",
    )
    threads.add_argument("--channel", metavar="CHANNEL", help="only threads in this channel id")
    threads.add_argument(
        "--since",
        metavar="WHEN",
        type=when.since,
        help="only threads updated since WHEN: a time ago (30m, 2h, 7d) or a UTC date or "
        "time (2025-06-01, 2025-06-01T09:00:00Z)",
    )
    threads.add_argument(
        "--json", action="store_true", help="one JSON object per thread per line (JSON Lines)"
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
    export.add_argument(
        "--redact-key",
        metavar="KEY_FILE",
        help="redact secrets, e-mail addresses, phone numbers and Slack user ids "
        "(docs/evaluation.md) and write the key that undoes it to the new file KEY_FILE",
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
        "--older-than", metavar="DAYS", type=when.days, required=True, help="age in days (> 0)"
    )
    purge.add_argument(
        "--dry-run", action="store_true", help="only list the threads that would be deleted"
    )
    purge.set_defaults(handler=run_purge)


def run_threads(args: argparse.Namespace) -> int:
    with existing_store("threads") as store:
        for summary in store.threads(args.channel, args.since):
            if args.json:
                fields = asdict(summary)
                row = {"thread": str(summary.key), **fields.pop("key"), **fields}
                print(json.dumps(row, ensure_ascii=False))
                continue
            tokens = summary.prompt_tokens + summary.completion_tokens
            print(
                f"{summary.key}\t{summary.entries} entries\tupdated {summary.updated_at}"
                f"\t{tokens} tokens (prompt {summary.prompt_tokens}, cached "
                f"{summary.cached_tokens}, completion {summary.completion_tokens})"
                f"\tfeedback {summary.good_votes} good, {summary.bad_votes} bad"
            )
    return 0


def run_purge(args: argparse.Namespace) -> int:
    try:
        cutoff = when.ago(args.older_than)
    except ValueError as exc:  # at the very edge of year 1, a moment after it was checked
        raise CliError(f"DAYS is too large: {exc}") from None
    with existing_store("purge") as store:
        keys = store.purge(cutoff, dry_run=args.dry_run)
    verb = "would delete" if args.dry_run else "deleted"
    for key in keys:
        print(f"{verb}\t{key}")
    print(f"{verb} {len(keys)} thread(s) not updated since {when.shown(cutoff)}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    try:
        key = ThreadKey.parse(args.thread)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    with existing_store("export") as store:
        if not store.has_thread(key):
            raise CliError(f"no thread {key} in the store (see `assistant threads`)")
        entries = store.entries(key)
        redactor = Redactor() if args.redact_key else None
        if args.redact_key:
            redaction_key_path(args.redact_key, Path(args.out) if args.out else None)
        if redactor is not None:
            entries = [redactor.entry(entry) for entry in entries]
        if not args.with_metadata:
            _export(export_json(entries), args, redactor)
            return 0
        metas = store.metadata(key)
        panel = store.panel(key)
        votes = store.votes(key)
        document = {
            "thread": str(key),
            "totals": {
                name: sum(getattr(meta, name) or 0 for meta in metas)
                for name in ("prompt_tokens", "cached_tokens", "completion_tokens")
            },
            "log": [entry.as_dict() for entry in entries],
            "metadata": [meta.shown() for meta in metas],
            "panel": asdict(panel) if panel is not None else None,
            "feedback": {
                "good": sum(vote.vote == "good" for vote in votes),
                "bad": sum(vote.vote == "bad" for vote in votes),
                "votes": [asdict(vote) for vote in votes],
            },
        }
        if redactor is not None:
            document = redactor.value(document)
        _export(json.dumps(document, ensure_ascii=False, indent=2) + "\n", args, redactor)
    return 0


def _export(text: str, args: argparse.Namespace, redactor: Redactor | None) -> None:
    if redactor is not None:  # the key first: no redacted output that cannot be undone
        write_redaction_key(redactor.key, args.redact_key, Path(args.out) if args.out else None)
    write_output(text, args.out)
