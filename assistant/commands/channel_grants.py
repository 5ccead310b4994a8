"""`assistant channels grants TEAM CHANNEL [--all] [--revoke ID]`: the standing approvals of a
channel's MCP tools (docs/operations.md, "Auditing and revoking grants"), one line each;
revoking one records it in the thread where it was given. Exit status 0, or 2 with one line."""

from __future__ import annotations

import argparse
import getpass
import re

from assistant.commands import CliError
from assistant.commands.stored import existing_store
from assistant.run.approvals.entries import grant_revoked_text
from context.entry import now_timestamp
from context.render import printable
from context.storage import Grant, Store, ThreadKey

_TEAM = re.compile(r"^[A-Z0-9]{2,}$")
_OPERATOR = re.compile(r"[^A-Za-z0-9._-]")


def register_grants(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    grants = verbs.add_parser(
        "grants",
        help="list a channel's grants (tools its people allowed always), or revoke one",
    )
    grants.add_argument("team", metavar="TEAM", help="the workspace id (T…)")
    grants.add_argument("channel", metavar="CHANNEL", help="the channel id (C…)")
    grants.add_argument("--all", action="store_true", help="revoked ones too")
    grants.add_argument(
        "--revoke", type=int, metavar="ID", help="revoke this grant: its tool asks again"
    )
    grants.set_defaults(handler=run_grants)


def grant_line(grant: Grant) -> str:
    whom = "everyone" if grant.user is None else grant.user
    line = (
        f"{grant.id}\t{grant.qualified}\tfor {whom}\tgiven by {grant.granted_by} at "
        f"{grant.granted_at} in thread {grant.thread_ts}"
    )
    if grant.revoked_at is not None:
        line += f"\trevoked by {grant.revoked_by} at {grant.revoked_at}"
    return line


def run_grants(args: argparse.Namespace) -> int:
    for value, what in ((args.team, "TEAM"), (args.channel, "CHANNEL")):
        if not _TEAM.match(value):
            raise CliError(f"{what} {value[:40]!r} is not a Slack id")
    with existing_store("channels grants") as store:
        if args.revoke is not None:
            revoke(store, args.team, args.channel, args.revoke, _operator())
            return 0
        for grant in store.grants(args.team, args.channel, revoked=args.all):
            print(printable(grant_line(grant)))
    return 0


def revoke(store: Store, team: str, channel: str, grant_id: int, by: str) -> Grant:
    """Revoke the channel's grant `grant_id` and record it in the thread where it was given
    (when that log is still kept). CliError when the channel has no such grant in force."""
    in_force = {grant.id for grant in store.grants(team, channel)}
    revoked = store.revoke_grant(team, grant_id, by) if grant_id in in_force else None
    if revoked is None:
        raise CliError(f"no grant {grant_id} in force in {team} {channel}")
    key = ThreadKey(team, channel, revoked.thread_ts)
    if store.has_thread(key):
        store.append(key, grant_revoked_text(revoked), now_timestamp())
    print(printable(grant_line(revoked)))
    return revoked


def _operator() -> str:
    """Who revoked it from the command line, as the log says it: the operating system's user
    (the store has no Slack person for a command)."""
    try:
        name = getpass.getuser()
    except (OSError, KeyError):
        name = "unknown"
    return f"the operator {_OPERATOR.sub('', name)[:64] or 'unknown'} (command line)"
