"""`assistant mcp connections [TEAM] [--revoke TEAM USER SERVER]`: people's sign-ins to the
`auth: user` MCP servers (docs/operations.md#revoking-a-persons-connection), in the store
DATABASE_URL names. Lists who is connected to what (never a token); revokes one connection
(at the server's revocation endpoint when it has one; the row removed either way). Exit
status 0, or 2 with one line."""

from __future__ import annotations

import argparse
import asyncio
import re

from pydantic import ValidationError

from assistant.commands import CliError
from assistant.commands.stored import existing_store
from assistant.settings.groups import ToolSettings
from context.render import printable
from context.storage import Store

_ID = re.compile(r"^[A-Z0-9]{1,32}$")
_SERVER = re.compile(r"^[A-Za-z0-9-]{1,32}$")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser(
        "mcp",
        help="people's sign-ins to the MCP servers that act as them (auth: user)",
        description="People's connections to the auth: user servers of ASSISTANT_MCP_FILE, in "
        "the store (DATABASE_URL). Exit status 0, or 2 with one line.",
    )
    verbs = mcp.add_subparsers(dest="verb", required=True, metavar="VERB")
    connections = verbs.add_parser(
        "connections",
        help="one line per person's connection (no secret), or --revoke one",
    )
    connections.add_argument("team", metavar="TEAM", nargs="?", help="only this workspace's (T…)")
    connections.add_argument(
        "--revoke",
        nargs=3,
        metavar=("TEAM", "USER", "SERVER"),
        help="revoke this person's connection to this server (at the server if it can)",
    )
    connections.set_defaults(handler=run_connections)


def run_connections(args: argparse.Namespace) -> int:
    if args.revoke is not None:
        team, user, server = args.revoke
        if not (_ID.match(team) and _ID.match(user) and _SERVER.match(server)):
            raise CliError("--revoke takes a workspace id (T…), a user id (U…) and a server name")
        with existing_store("mcp connections") as store:
            print(printable(asyncio.run(_revoke(store, team, user, server))))
        return 0
    if args.team is not None and not _ID.match(args.team):
        raise CliError(f"{args.team[:40]!r} is not a workspace id (T…)")
    with existing_store("mcp connections") as store:
        for row in store.mcp_connections(args.team):
            expires = f"expires {row.expires_at}" if row.expires_at else "no expiry"
            print(
                printable(
                    f"{row.team}\t{row.user}\t{row.server}\tconnected {row.connected_at}\t"
                    f"{expires}\tscope {row.scope or '-'}"
                )
            )
    return 0


async def _revoke(store: Store, team: str, user: str, server: str) -> str:
    """The connection removed; revoked at the server when the MCP file and the key allow."""
    if store.mcp_connection(team, user, server) is None:
        raise CliError(f"{user} in {team} has no connection to {server}")
    sign_ins = None
    try:
        tools = ToolSettings()
        configs = [c for c in tools.mcp_servers() if c.per_person]
        if configs and tools.secret_key is not None and tools.public_url is not None:
            from assistant.mcp.signin.sealing import Sealer
            from assistant.mcp.signin.tokens import SignIns

            sealer = Sealer(tools.secret_key.get_secret_value())
            sign_ins = SignIns(store, sealer, tools.public_url, configs)
    except (ValidationError, ValueError):
        sign_ins = None  # the row goes anyway: revoking is what was asked
    if sign_ins is None:
        store.delete_connection(team, user, server)
        return (
            f"{team}\t{user}\t{server}\tremoved (not revoked at the server: "
            "ASSISTANT_MCP_FILE, ASSISTANT_SECRET_KEY or ASSISTANT_PUBLIC_URL not usable here)"
        )
    revoked = await sign_ins.disconnect(server, team, user)
    how = "revoked at the server" if revoked else "removed (the server did not revoke it)"
    return f"{team}\t{user}\t{server}\t{how}"
