"""`assistant memory list|add|edit|forget|export|import|audit`: what channels remember
(docs/command-line.md#channel-memory), in the store DATABASE_URL names. Each change is a row
of the store's audit (`via` cli, or import). Exit status 0, or 2 with one line."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from assistant.commands import CliError
from assistant.commands.io import read_exported
from assistant.commands.stored import existing_store
from context.memory import MAX_MEMORIES, Memory, clean_text
from context.render import printable
from context.storage.memory import MemoryRefused, NewMemory

_TEAM = re.compile(r"^[A-Z0-9]{2,}$")
_CHANNEL = re.compile(r"^(\*|[A-Z0-9]{2,})$")
_USER = re.compile(r"^(cli|[UW][A-Z0-9]{1,20})$")
_ID = re.compile(r"^m?([0-9]{1,12})$")
_MOMENT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    memory = commands.add_parser(
        "memory",
        help="list, add, edit, forget, export or import what a channel remembers; its audit",
        description="Channel memory in the store (DATABASE_URL): per channel of a workspace, "
        "per DM (its person's), and the workspace's (channel *). Exit status 0, or 2 with one "
        "line.",
    )
    verbs = memory.add_subparsers(dest="verb", required=True, metavar="VERB")

    def where(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("team", metavar="TEAM", help="the workspace id (T…)")
        parser.add_argument(
            "channel", metavar="CHANNEL", help="the channel or DM id (C…, G…, D…), or * for all"
        )

    listing = verbs.add_parser(
        "list", help="one line per memory: id, when, who asked, from which thread, its text"
    )
    where(listing)
    listing.set_defaults(handler=run_list)

    adding = verbs.add_parser("add", help="remember one text for the channel")
    where(adding)
    adding.add_argument("text", metavar="TEXT", help="what to remember")
    adding.add_argument("--author", default="cli", help="who asked for it (U…; default: cli)")
    adding.set_defaults(handler=run_add)

    editing = verbs.add_parser("edit", help="change the text of one memory of the channel")
    where(editing)
    editing.add_argument("id", metavar="ID", help="the memory's id (m12, or 12)")
    editing.add_argument("text", metavar="TEXT", help="its new text")
    editing.set_defaults(handler=run_edit)

    forgetting = verbs.add_parser("forget", help="forget one memory of the channel")
    where(forgetting)
    forgetting.add_argument("id", metavar="ID", help="the memory's id (m12, or 12)")
    forgetting.set_defaults(handler=run_forget)

    export = verbs.add_parser("export", help="write the channel's memories as JSON")
    where(export)
    export.add_argument("file", nargs="?", default="-", help="a file, or - (default) for stdout")
    export.set_defaults(handler=run_export)

    importing = verbs.add_parser(
        "import", help="remember every memory of a file export wrote (all or none)"
    )
    where(importing)
    importing.add_argument("file", help="a JSON or YAML file, or - for stdin")
    importing.set_defaults(handler=run_import)

    audit = verbs.add_parser(
        "audit", help="every change of the workspace's memories: when, what, who, how"
    )
    audit.add_argument("team", metavar="TEAM", help="the workspace id (T…)")
    audit.add_argument("channel", metavar="CHANNEL", nargs="?", help="only this channel's")
    audit.set_defaults(handler=run_audit)


def _where(args: argparse.Namespace) -> tuple[str, str]:
    if not _TEAM.match(args.team):
        raise CliError(f"TEAM {args.team[:40]!r} is not a Slack workspace id (T…)")
    if not _CHANNEL.match(args.channel):
        raise CliError(f"CHANNEL {args.channel[:40]!r} is not a Slack channel id, nor *")
    return args.team, args.channel


def _line(memory: Memory) -> str:
    said = json.dumps(memory.text, ensure_ascii=False)
    return f"{memory.name}\t{memory.created_at}\t{memory.author}\t{memory.source}\t{said}"


def run_list(args: argparse.Namespace) -> int:
    team, channel = _where(args)
    with existing_store("memory list") as store:
        for memory in store.memories(team, channel):
            print(printable(_line(memory)))
    return 0


def run_add(args: argparse.Namespace) -> int:
    team, channel = _where(args)
    if not _USER.match(args.author):
        raise CliError(f"--author {args.author[:40]!r} is not a Slack user id (U…) nor cli")
    with existing_store("memory add") as store:
        try:
            memory = store.remember(team, channel, args.text, args.author, "cli", "cli")
        except MemoryRefused as exc:
            raise CliError(str(exc)) from None
        print(printable(_line(memory)))
    return 0


def _memory_id(text: str) -> int:
    found = _ID.match(text)
    if found is None:
        raise CliError(f"ID {text[:40]!r} is not a memory's id (m12)")
    return int(found.group(1))


def run_edit(args: argparse.Namespace) -> int:
    team, channel = _where(args)
    memory_id = _memory_id(args.id)
    with existing_store("memory edit") as store:
        try:
            # The store checks the text as `add` does (`clean_text`): one place for the caps.
            edited = store.edit_memory(team, channel, memory_id, args.text, "cli", "cli")
        except MemoryRefused as exc:
            raise CliError(str(exc)) from None
        print(printable(_line(edited)))
    return 0


def run_forget(args: argparse.Namespace) -> int:
    team, channel = _where(args)
    memory_id = _memory_id(args.id)
    with existing_store("memory forget") as store:
        try:
            gone = store.forget(team, channel, memory_id, "cli", "cli")
        except MemoryRefused as exc:
            raise CliError(str(exc)) from None
        print(printable(_line(gone)))
    return 0


def run_export(args: argparse.Namespace) -> int:
    team, channel = _where(args)
    with existing_store("memory export") as store:
        kept = store.memories(team, channel)
    document = {
        "team": team,
        "channel": channel,
        "memories": [
            {"text": m.text, "author": m.author, "created_at": m.created_at, "source": m.source}
            for m in kept
        ],
    }
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    if args.file == "-":
        sys.stdout.write(text)
    else:
        Path(args.file).write_text(text, encoding="utf-8")
    print(f"assistant memory export: {len(kept)} memories written", file=sys.stderr)
    return 0


def run_import(args: argparse.Namespace) -> int:
    team, channel = _where(args)
    name, items = read_exported(args.file, "memories")
    if len(items) > MAX_MEMORIES:
        raise CliError(f"{name} has {len(items)} memories; a channel keeps at most {MAX_MEMORIES}")
    # Checked all before any is kept: a file with one mistake changes nothing.
    memories = [_item(item, f"{name}: memory {n}") for n, item in enumerate(items, 1)]
    with existing_store("memory import") as store:
        try:
            kept = store.remember_all(team, channel, memories, "import")
        except MemoryRefused as exc:
            raise CliError(f"{name}: {exc}") from None
    print(f"assistant memory import: {len(kept)} memories kept", file=sys.stderr)
    return 0


def _item(item: Any, where: str) -> NewMemory:
    if not isinstance(item, dict):
        raise CliError(f"{where}: not an object")
    unknown = set(item) - {"text", "author", "created_at", "source"}
    if unknown:
        raise CliError(f"{where}: unknown field {sorted(unknown)[0][:40]!r}")
    text, author = item.get("text"), item.get("author", "cli")
    at, source = item.get("created_at"), item.get("source", "import")
    if not isinstance(text, str):
        raise CliError(f"{where}: text: a string is required")
    if not isinstance(author, str) or not _USER.match(author):
        raise CliError(f"{where}: author: not a Slack user id (U…) nor cli")
    if at is not None and (not isinstance(at, str) or not _MOMENT.match(at)):
        raise CliError(f"{where}: created_at: not a UTC time like 2026-11-29T10:00:00Z")
    if not isinstance(source, str) or not 0 < len(source) <= 200:
        raise CliError(f"{where}: source: a string of 1 to 200 characters is required")
    try:
        clean_text(text)
    except ValueError as exc:
        raise CliError(f"{where}: text: {exc}") from None
    return NewMemory(text, author, at, source)


def run_audit(args: argparse.Namespace) -> int:
    if not _TEAM.match(args.team):
        raise CliError(f"TEAM {args.team[:40]!r} is not a Slack workspace id (T…)")
    if args.channel is not None and not _CHANNEL.match(args.channel):
        raise CliError(f"CHANNEL {args.channel[:40]!r} is not a Slack channel id, nor *")
    with existing_store("memory audit") as store:
        for change in store.memory_changes(args.team, args.channel):
            said = json.dumps(change.text, ensure_ascii=False)
            line = (
                f"{change.at}\t{change.channel}\tm{change.memory_id}\t{change.action}\t"
                f"{change.actor}\t{change.via}\t{said}"
            )
            print(printable(line))
    return 0
