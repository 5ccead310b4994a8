"""`assistant check`: what the configured model server does for every model the app asks."""

from __future__ import annotations

import argparse
import asyncio
import sys

from assistant.commands import CliError
from assistant.settings.environment import Settings, SettingsError, load_settings

EXIT_WRONG = 1  # something will not work as set; 0: everything works (warnings aside)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser(
        "check",
        help="check the model server for ASSISTANT_MODEL and every channel's model",
        description="Ask the model server at OPENAI_BASE_URL, for ASSISTANT_MODEL and every "
        "model a channel's settings name: whether it is reachable, serves the model, honours "
        'tool_choice "required", streams with usage, takes images, and which context window '
        "it tells. One line a finding, with what to set when it is wrong. Exit status 0: "
        "everything works (lines marked warn work with a caveat); 1: something will not "
        "work as set; 2: the settings are wrong. Needs OPENAI_API_KEY; makes two short model "
        "calls a model. With ASSISTANT_MCP_FILE, its servers too: each connected, its tools "
        "listed, every problem of every server at once.",
    )
    check.add_argument(
        "--mcp", action="store_true", help="check only ASSISTANT_MCP_FILE (no model, no key)"
    )
    check.set_defaults(handler=run_check)


def run_check(args: argparse.Namespace) -> int:
    from assistant.app import model_findings
    from assistant.model.check import Finding, summary, table
    from assistant.model.client import ModelClient
    from context.storage import database_url, has_store, open_store

    try:
        # --mcp asks no model: any key will do.
        settings = load_settings("replay", **({"openai_api_key": "unused"} if args.mcp else {}))
    except SettingsError as exc:
        raise CliError(f"the settings are wrong:\n{exc}") from None
    if args.mcp:
        if not settings.tools.mcp_servers():
            raise CliError("--mcp: ASSISTANT_MCP_FILE names no server")
        return EXIT_WRONG if check_mcp_file(settings) else 0

    async def check() -> tuple[str, list[Finding]]:
        client = ModelClient(settings.model.options())
        # The channels' models, when there is a store (none is made for it).
        stored = has_store(database_url(settings.storage.database_url))
        store = open_store(settings.storage.database_url) if stored else None
        try:
            return client.where, await model_findings(settings, client, store)
        finally:
            if store is not None:
                store.close()
            await client.close()

    where, findings = asyncio.run(check())
    print(table(findings))
    print(summary(where, findings), file=sys.stderr)
    mcp_failing = check_mcp_file(settings)
    return EXIT_WRONG if any(f.ok is False for f in findings) or mcp_failing else 0


def check_mcp_file(settings: Settings) -> bool:
    """ASSISTANT_MCP_FILE's servers checked (assistant/mcp/check.py), its table printed:
    whether anything failed."""
    from assistant.app import mcp_findings
    from assistant.mcp.check import summary, table

    if not settings.tools.mcp_servers():
        return False
    findings = asyncio.run(mcp_findings(settings))
    print(table(findings))
    print(summary(findings), file=sys.stderr)
    return any(not f.ok for f in findings)
