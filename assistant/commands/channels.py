"""`assistant channels list|set|export|import|grants`: channel settings for operators
(docs/configuration.md, "Configuring channels"), in the store DATABASE_URL names. Exit status 0, or
2 with one line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from assistant.commands import CliError
from assistant.commands.channel_grants import register_grants
from assistant.commands.io import named, read_exported, read_text
from assistant.commands.stored import existing_store
from assistant.i18n.words import LOCALES
from assistant.settings.environment import SettingsError, load_channel_settings
from context.channels import ChannelConfig, merged
from context.memory import MEMORY_WRITERS
from context.render import printable
from context.spend import parse_amount
from context.storage import ModelRefusal

# Fields `set` may give; `--unset` takes them back to the default's.
SETTABLE = (
    "persona",
    "persona_name",
    "model",
    "enabled",
    "strict_mentions",
    "access",
    "users",
    "groups",
    "editors",
    "username",
    "icon_emoji",
    "icon_url",
    "locale",
    "slack_search",
    "search_channel_types",
    "tool_servers",
    "daily_budget",
    "monthly_budget",
    "daily_token_budget",
    "monthly_token_budget",
    "memory",
)
_LISTS = ("users", "groups", "editors")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    channels = commands.add_parser(
        "channels",
        help="list, set, export or import the persona and rules of each channel",
        description="Channel settings in the store (DATABASE_URL): per channel of a "
        "workspace, and the workspace default (channel *). Exit status 0, or 2 with one line.",
    )
    verbs = channels.add_subparsers(dest="verb", required=True, metavar="VERB")
    listing = verbs.add_parser(
        "list",
        help="one line per configured channel, and one per channel whose model the model "
        "service refused",
    )
    listing.add_argument("--team", help="only this workspace's (T…)")
    listing.set_defaults(handler=run_list)

    setting = verbs.add_parser("set", help="change some settings of one channel")
    setting.add_argument("team", metavar="TEAM", help="the workspace id (T…)")
    setting.add_argument(
        "channel", metavar="CHANNEL", help="the channel id (C…), or * for the default"
    )
    what = setting.add_mutually_exclusive_group()
    what.add_argument("--persona", help="the persona: the system message text")
    what.add_argument("--persona-file", type=Path, help="the persona, read from a file")
    what.add_argument("--persona-name", help="a named persona of ASSISTANT_PERSONAS_FILE")
    setting.add_argument("--model", help="the model for this channel's runs")
    switch = setting.add_mutually_exclusive_group()
    switch.add_argument("--on", dest="enabled", action="store_const", const=True)
    switch.add_argument("--off", dest="enabled", action="store_const", const=False)
    strict = setting.add_mutually_exclusive_group()
    strict.add_argument(
        "--strict-mentions",
        dest="strict_mentions",
        action="store_const",
        const=True,
        help="answer follow-ups in a thread only when they mention the bot",
    )
    strict.add_argument(
        "--any-followup",
        dest="strict_mentions",
        action="store_const",
        const=False,
        help="answer every follow-up in a thread the bot is in",
    )
    access = setting.add_mutually_exclusive_group()
    access.add_argument("--everyone", dest="access", action="store_const", const="everyone")
    access.add_argument(
        "--only", metavar="IDS", help="only these people (U…) and user groups (S…), comma-separated"
    )
    setting.add_argument("--editors", metavar="IDS", help="default only: who else may edit (U…)")
    setting.add_argument("--username", help="the name its posts carry")
    icon = setting.add_mutually_exclusive_group()
    icon.add_argument("--icon-emoji", help="the icon its posts carry, e.g. :robot_face:")
    icon.add_argument("--icon-url", help="the icon its posts carry, an https URL")
    search = setting.add_mutually_exclusive_group()
    search.add_argument(
        "--slack-search",
        dest="slack_search",
        action="store_const",
        const=True,
        help="its runs may search Slack as the person who asked (searchSlack)",
    )
    search.add_argument("--no-slack-search", dest="slack_search", action="store_const", const=False)
    setting.add_argument(
        "--search-channel-types",
        metavar="TYPES",
        help="what Slack search covers, comma-separated: public_channel, private_channel, mpim, im",
    )
    setting.add_argument(
        "--tool-servers",
        metavar="NAMES",
        help="the MCP servers (shop) or tools (shop__lookup_order) its runs have, comma-separated; "
        '"" for none (unset: every server of ASSISTANT_MCP_FILE)',
    )
    setting.add_argument(
        "--locale",
        choices=LOCALES,
        help="the language of the bot's own words: a channel's fixes it there, the "
        "default's is for people whose Slack language has no catalog",
    )
    for kind in ("daily", "monthly"):
        setting.add_argument(
            f"--{kind}-budget",
            metavar="AMOUNT",
            type=budget_amount,
            help=f"the {kind} spend limit (UTC {'day' if kind == 'daily' else 'month'}): US "
            "dollars of ASSISTANT_PRICES (5, $0.50) for the models it prices, or tokens "
            "(200000 tokens, 2M tokens) for the others; 0 stops every call",
        )
    setting.add_argument(
        "--memory",
        choices=MEMORY_WRITERS,
        help="who may ask its runs to remember or forget for it (default: members)",
    )
    setting.add_argument(
        "--unset",
        action="append",
        default=[],
        choices=SETTABLE,
        metavar="FIELD",
        help=f"take FIELD back to the default's (repeatable): {', '.join(SETTABLE)}",
    )
    setting.set_defaults(handler=run_set)

    export = verbs.add_parser("export", help="write every channel's settings as JSON or YAML")
    export.add_argument("file", nargs="?", default="-", help="a file, or - (default) for stdout")
    export.add_argument("--team", help="only this workspace's (T…)")
    export.add_argument("--format", choices=("json", "yaml"), help="default: by the file's suffix")
    export.set_defaults(handler=run_export)

    importing = verbs.add_parser(
        "import", help="keep the settings of a file written by export (all or none)"
    )
    importing.add_argument("file", help="a JSON or YAML file, or - for stdin")
    importing.set_defaults(handler=run_import)

    register_grants(verbs)


def _line(config: ChannelConfig) -> str:
    values = config.model_dump(exclude_defaults=True, exclude={"team", "channel"})
    shown = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in values.items())
    return f"{config.team}\t{config.channel}\t{shown}"


def run_list(args: argparse.Namespace) -> int:
    with existing_store("channels list") as store:
        for config in store.channel_configs(args.team):
            print(printable(_line(config)))
        for refusal in store.model_refusals(args.team):
            in_force = merged(*store.channel_configs_in_force(refusal.team, refusal.channel))
            if in_force["model"] == refusal.model:  # else the channel has another model now
                print(printable(_refused_line(refusal)))
    return 0


def _refused_line(refusal: ModelRefusal) -> str:
    model = json.dumps(refusal.model, ensure_ascii=False)
    return (
        f"{refusal.team}\t{refusal.channel}\tmodel {model} refused by the model service "
        f"({refusal.what}) at {refusal.at}: its runs cannot answer until it is changed"
    )


def run_set(args: argparse.Namespace) -> int:
    changes: dict[str, Any] = {}
    if args.persona_file is not None:
        changes["persona"] = read_text(args.persona_file).strip()
    if args.persona_name is not None:
        _check_persona_name(args.persona_name)
    for name in (
        "persona",
        "persona_name",
        "model",
        "enabled",
        "strict_mentions",
        "access",
        "username",
        "icon_emoji",
        "icon_url",
        "locale",
        "slack_search",
        "memory",
    ):
        if getattr(args, name) is not None:
            changes[name] = getattr(args, name)
    if "persona" in changes or "persona_name" in changes:
        changes.setdefault("persona", None)  # one persona replaces the other
        changes.setdefault("persona_name", None)
    if args.only is not None:
        ids = [part.strip() for part in args.only.split(",") if part.strip()]
        changes.update(
            access="listed",
            users=[i for i in ids if not i.startswith("S")],
            groups=[i for i in ids if i.startswith("S")],
        )
    if args.editors is not None:
        changes["editors"] = _ids(args.editors)
    if args.search_channel_types is not None:
        changes["search_channel_types"] = _ids(args.search_channel_types)
    if args.tool_servers is not None:
        changes["tool_servers"] = _ids(args.tool_servers)
    for kind in ("daily", "monthly"):
        amount = getattr(args, f"{kind}_budget")
        if isinstance(amount, int):
            changes[f"{kind}_token_budget"] = amount
        elif amount is not None:
            changes[f"{kind}_budget"] = amount
    with existing_store("channels set") as store:
        kept = store.channel_config(args.team, args.channel)
        values = kept.model_dump() if kept else {"team": args.team, "channel": args.channel}
        values.update(changes)
        for name in args.unset:
            values[name] = () if name in _LISTS else None
        values.update(updated_by="cli", updated_at=None)
        config = _valid(values, f"{args.team} {args.channel}")
        if config.editors and not config.is_default:
            raise CliError("editors are named in the workspace default (CHANNEL *)")
        print(printable(_line(store.set_channel_config(config))))
    return 0


def budget_amount(text: str) -> float | int:
    """`--daily-budget`/`--monthly-budget`: US dollars, a float; or tokens, an int."""
    try:
        return parse_amount(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _ids(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _check_persona_name(name: str) -> None:
    """A channel may choose only a persona ASSISTANT_PERSONAS_FILE names: the app would
    otherwise find none by that name in each of the channel's runs."""
    try:
        settings = load_channel_settings()
        personas = settings.personas()
    except SettingsError as exc:
        raise CliError(str(exc).replace("\n", "; ")) from None
    except ValueError as exc:
        raise CliError(f"ASSISTANT_PERSONAS_FILE: {exc}") from None
    if name not in personas:
        where = settings.assistant_personas_file
        known = (
            f"in {named(str(where))} (it names {len(personas)})"
            if where
            else ("(ASSISTANT_PERSONAS_FILE is not set)")
        )
        raise CliError(f"--persona-name {named(name)}: no such persona {known}")


def _valid(values: dict[str, Any], where: str) -> ChannelConfig:
    try:
        return ChannelConfig(**values)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "settings"
        raise CliError(f"{where}: {field}: {error['msg'].removeprefix('Value error, ')}") from None
    except TypeError as exc:
        raise CliError(f"{where}: {exc}") from None


def _format(path: str, given: str | None) -> str:
    return given or ("yaml" if path.endswith((".yaml", ".yml")) else "json")


def run_export(args: argparse.Namespace) -> int:
    with existing_store("channels export") as store:
        configs = [
            c.model_dump(mode="json", exclude_defaults=True)
            for c in store.channel_configs(args.team)
        ]
    document = {"channels": configs}
    if _format(args.file, args.format) == "yaml":
        text = yaml.safe_dump(document, allow_unicode=True, sort_keys=False)
    else:
        text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    if args.file == "-":
        sys.stdout.write(text)
    else:
        Path(args.file).write_text(text, encoding="utf-8")
    print(f"assistant channels export: {len(configs)} settings written", file=sys.stderr)
    return 0


def run_import(args: argparse.Namespace) -> int:
    name, items = read_exported(args.file, "channels")
    configs = []
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise CliError(f"{name}: channel {number}: not an object")
        # Checked all before any is kept: a file with one mistake changes nothing.
        configs.append(_valid({**item, "updated_at": None}, f"{name}: channel {number}"))
    with existing_store("channels import") as store:
        store.set_channel_configs(configs)  # one transaction: all kept, or none
    print(f"assistant channels import: {len(configs)} settings kept", file=sys.stderr)
    return 0
