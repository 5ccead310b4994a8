"""`assistant mcp connections [TEAM] [--revoke TEAM USER SERVER | --revoke deployment SERVER]`:
people's sign-ins to the `auth: user` MCP servers and the deployment's to the `auth:
deployment` ones (docs/operations.md#revoking-a-persons-connection), in the store DATABASE_URL
names. Lists who is connected to what (never a token); revokes one connection (at the server's
revocation endpoint when it has one; the row removed either way).

`assistant mcp login SERVER [--wait SECONDS]`: the deployment's sign-in to an `auth:
deployment` server (docs/operations.md#signing-the-deployment-in): prints the authorize URL,
then waits until the browser came back to the running app's callback. Exit status 0, or 2
with one line."""

from __future__ import annotations

import argparse
import asyncio
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from pydantic import ValidationError

from assistant.commands import CliError
from assistant.commands.stored import existing_store
from assistant.mcp.signin.deployment import DEPLOYMENT_TEAM, DEPLOYMENT_USER
from assistant.settings.groups import ToolSettings
from context.render import printable
from context.storage import Store

if TYPE_CHECKING:
    from assistant.mcp.signin.tokens import SignIns

_ID = re.compile(r"^[A-Z0-9]{1,32}$")
_SERVER = re.compile(r"^[A-Za-z0-9-]{1,32}$")
DEPLOYMENT = "deployment"  # what `connections` lists, and `--revoke` takes, for the deployment
MAX_WAIT = 3600.0
_SCOPE = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]{1,200}$")  # RFC 6749's scope-token


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
        nargs="+",
        metavar="WHO",
        help="TEAM USER SERVER: revoke this person's connection to this server; deployment "
        "SERVER: the deployment's (at the server if it can)",
    )
    connections.set_defaults(handler=run_connections)
    login = verbs.add_parser(
        "login",
        help="sign the deployment in to an auth: deployment server (prints a URL to open)",
        description="Begin the deployment's sign-in to SERVER, print the authorize URL, and "
        "wait until the browser has come back to the running app's /mcp/oauth/callback.",
    )
    login.add_argument("server", metavar="SERVER", help="an auth: deployment server of the file")
    login.add_argument(
        "--wait",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="how long the sign-in link works and the command waits (default 600)",
    )
    login.add_argument(
        "--scope",
        metavar="SCOPES",
        help="scopes to ask for besides the server's usual ones and those the deployment has "
        "(space-separated: what a call's insufficient_scope named)",
    )
    login.set_defaults(handler=run_login)


def run_connections(args: argparse.Namespace) -> int:
    if args.revoke is not None:
        if len(args.revoke) == 2 and args.revoke[0] == DEPLOYMENT:
            team, user, server = DEPLOYMENT_TEAM, DEPLOYMENT_USER, args.revoke[1]
            if not _SERVER.match(server):
                raise CliError("--revoke deployment takes a server name")
        elif len(args.revoke) == 3:
            team, user, server = args.revoke
            if not (_ID.match(team) and _ID.match(user) and _SERVER.match(server)):
                raise CliError(
                    "--revoke takes a workspace id (T…), a user id (U…) and a server name"
                )
        else:
            raise CliError("--revoke takes TEAM USER SERVER, or deployment SERVER")
        with existing_store("mcp connections") as store:
            print(printable(asyncio.run(_revoke(store, team, user, server))))
        return 0
    if args.team is not None and not _ID.match(args.team):
        raise CliError(f"{args.team[:40]!r} is not a workspace id (T…)")
    with existing_store("mcp connections") as store:
        rows = store.mcp_connections(args.team)
        if args.team is None:  # the deployment's first: they serve everyone
            rows.sort(key=lambda r: r.team != DEPLOYMENT_TEAM)
        for row in rows:
            expires = f"expires {row.expires_at}" if row.expires_at else "no expiry"
            who = (
                f"{DEPLOYMENT}\t-"
                if (row.team, row.user) == (DEPLOYMENT_TEAM, DEPLOYMENT_USER)
                else f"{row.team}\t{row.user}"
            )
            print(
                printable(
                    f"{who}\t{row.server}\tconnected {row.connected_at}\t"
                    f"{expires}\tscope {row.scope or '-'}"
                )
            )
    return 0


def run_login(args: argparse.Namespace) -> int:
    server = args.server
    if not _SERVER.match(server):
        raise CliError(f"{server[:40]!r} is not a server name (1 to 32 letters, digits or '-')")
    if not 0 < args.wait <= MAX_WAIT:
        raise CliError(f"--wait takes seconds, more than 0 and at most {MAX_WAIT:.0f}")
    scope = args.scope
    if scope is not None and not (
        scope.split() and all(_SCOPE.match(t) for t in scope.split()) and len(scope) <= 2000
    ):
        raise CliError("--scope takes scope names separated by spaces (RFC 6749 scope-tokens)")
    with existing_store("mcp login") as store:
        sign_ins = _login_sign_ins(store, server)
        done = asyncio.run(_login(sign_ins, server, args.wait, scope=scope))
    print(printable(done))
    return 0


def _login_sign_ins(store: Store, server: str) -> SignIns:
    """The sign-ins for `server`, which must be an `auth: deployment` server of the file."""
    try:
        tools = ToolSettings()
        configs = tools.mcp_servers()
    except (ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CliError(f"ASSISTANT_MCP_FILE: {first}") from None
    config = next((c for c in configs if c.name == server), None)
    if config is None or not config.deployment:
        raise CliError(f"{server} is not an auth: deployment server of ASSISTANT_MCP_FILE")
    if tools.secret_key is None or tools.public_url is None:
        raise CliError("mcp login needs ASSISTANT_SECRET_KEY and ASSISTANT_PUBLIC_URL, as the app")
    from assistant.mcp.signin.sealing import Sealer
    from assistant.mcp.signin.tokens import SignIns

    try:
        sealer = Sealer(tools.secret_key.get_secret_value())
    except ValueError as exc:
        raise CliError(str(exc)) from None
    return SignIns(store, sealer, tools.public_url, [config])


async def _login(
    sign_ins: SignIns, server: str, wait: float, poll: float = 0.5, scope: str | None = None
) -> str:
    from assistant.mcp.signin.deployment import await_login, begin_login

    until = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=wait)
    try:
        login = await begin_login(sign_ins, server, until, scope)
    except ValueError as exc:
        raise CliError(f"no sign-in to {server} could be started: {exc}") from None
    print(f"Open this URL in a browser and sign in as the deployment's account:\n{login.url}")
    print(f"Waiting until {until:%Y-%m-%dT%H:%M:%SZ} for the app's callback…", flush=True)
    why = await await_login(sign_ins, login, until, poll)
    if why is not None:
        raise CliError(f"not connected to {server}: {why}")
    return f"{DEPLOYMENT}\t{server}\tconnected"


async def _revoke(store: Store, team: str, user: str, server: str) -> str:
    """The connection removed; revoked at the server when the MCP file and the key allow."""
    if store.mcp_connection(team, user, server) is None:
        if team == DEPLOYMENT_TEAM:
            raise CliError(f"the deployment has no connection to {server}")
        raise CliError(f"{user} in {team} has no connection to {server}")
    sign_ins = None
    try:
        tools = ToolSettings()
        configs = [c for c in tools.mcp_servers() if c.signs_in]
        if configs and tools.secret_key is not None and tools.public_url is not None:
            from assistant.mcp.signin.sealing import Sealer
            from assistant.mcp.signin.tokens import SignIns

            sealer = Sealer(tools.secret_key.get_secret_value())
            sign_ins = SignIns(store, sealer, tools.public_url, configs)
    except (ValidationError, ValueError):
        sign_ins = None  # the row goes anyway: revoking is what was asked
    who = DEPLOYMENT if team == DEPLOYMENT_TEAM else f"{team}\t{user}"
    if sign_ins is None:
        store.delete_connection(team, user, server)
        return (
            f"{who}\t{server}\tremoved (not revoked at the server: "
            "ASSISTANT_MCP_FILE, ASSISTANT_SECRET_KEY or ASSISTANT_PUBLIC_URL not usable here)"
        )
    revoked = await sign_ins.disconnect(server, team, user)
    how = "revoked at the server" if revoked else "removed (the server did not revoke it)"
    return f"{who}\t{server}\t{how}"
