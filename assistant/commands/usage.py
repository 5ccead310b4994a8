"""`assistant usage`: what the model calls cost, from the store's usage metadata, by workspace,
channel, user, day or model. The sums are the database's (`Housekeeping.usage`); here only
the prices are applied, per group and model, and the report written."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

from assistant.commands import CliError, when
from assistant.commands.io import one_line
from assistant.commands.stored import existing_store
from assistant.commands.verdicts import run_verdicts
from assistant.settings.environment import SettingsError, load_usage_settings
from assistant.settings.prices import PriceTable
from context.channels import WORKSPACE_DEFAULT, merged
from context.render import printable
from context.spend import MICRO, Unit, limits_of, periods, shown_amount
from context.storage import Store, UsageRow
from context.storage.usage import USAGE_GROUPS

# `judge_calls`: of the calls, a live judge's (ASSISTANT_JUDGE_SAMPLE).
COUNTS = ("calls", "judge_calls", "answers", "input_tokens", "cached_tokens", "output_tokens")
# The JSON keys of each grouping's values, in the order `UsageRow.group` holds them.
GROUP_KEYS = {
    None: (),
    "workspace": ("workspace",),
    "channel": ("workspace", "channel"),
    "user": ("user",),
    "day": ("day",),
    "model": ("model",),
}
UNKNOWN = "(unknown)"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    usage = commands.add_parser(
        "usage",
        help="what the model calls cost, by workspace, channel, user, day or model",
        description="Sum the model calls recorded in the store (DATABASE_URL): calls, input "
        "tokens (cached ones included), cached and output tokens, answers (runs ended), and "
        "the calls of the live judge among the calls (ASSISTANT_JUDGE_SAMPLE), and "
        "their estimated cost in US dollars from ASSISTANT_PRICES (tokens only without it).",
    )
    usage.add_argument(
        "--since",
        metavar="WHEN",
        type=when.since,
        help="only what was recorded at or after WHEN: a time ago (30m, 2h, 7d) or a UTC date "
        "or time (2025-06-01, 2025-06-01T09:00:00Z); default: from the start",
    )
    usage.add_argument(
        "--until",
        metavar="WHEN",
        type=when.since,
        help="only what was recorded before WHEN (same forms); default: now",
    )
    usage.add_argument(
        "--by", choices=USAGE_GROUPS, help="one line per workspace, channel, user, UTC day or model"
    )
    usage.add_argument("--json", action="store_true", help="the report as one JSON object")
    usage.add_argument(
        "--judged",
        action="store_true",
        help="instead: the live judge's verdicts (ASSISTANT_JUDGE_SAMPLE) by channel and "
        "model, as `assistant eval verdicts`",
    )
    usage.set_defaults(handler=run_usage)


@dataclass
class Group:
    """The sums of one line of the report, and its cost while every model in it has a price."""

    values: tuple[str | None, ...]
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    cost: float | None = 0.0

    def add(self, row: UsageRow, prices: PriceTable | None, unpriced: set[str]) -> None:
        for name in COUNTS:
            self.counts[name] += getattr(row, name)
        if not (row.calls or row.input_tokens or row.output_tokens):
            return  # answers alone cost nothing more
        price = prices.price_of(row.model) if prices is not None else None
        if price is None:
            unpriced.add(row.model or UNKNOWN)
            self.cost = None
        elif self.cost is not None:
            self.cost += price.cost(row.input_tokens, row.cached_tokens, row.output_tokens)

    def as_dict(self, keys: tuple[str, ...]) -> dict[str, object]:
        cost = None if self.cost is None else round(self.cost, 6)
        counts: dict[str, int | None] = dict(self.counts)
        if keys == ("model",):
            counts["answers"] = None  # a run's end has no model: see the total
        return {**dict(zip(keys, self.values, strict=True)), **counts, "cost_usd": cost}

    def cells(self, by: str | None, names: tuple[str, ...] = COUNTS) -> list[str]:
        """The line of the text report: its label, then the counts `names`."""
        # Names come from Slack and the model's server: escaped as the trace escapes them.
        label = "/".join(value or UNKNOWN for value in self.values) if self.values else "total"
        label = one_line(label)
        counts = [f"{self.counts[name]:,}" for name in names]
        if by == "model" and self.values:
            counts[names.index("answers")] = "-"
        return [label, *counts, "-" if self.cost is None else f"{self.cost:.4f}"]


def run_usage(args: argparse.Namespace) -> int:
    if args.judged:
        if args.by is not None:
            raise CliError("--judged reports by channel and model: no --by")
        return run_verdicts(args)
    if args.since is not None and args.until is not None and args.since >= args.until:
        raise CliError(
            f"--since {when.shown(args.since)} is not before --until {when.shown(args.until)}"
        )
    try:
        prices = load_usage_settings().assistant_prices
    except SettingsError as exc:
        raise CliError(str(exc).replace("\n", "; ")) from None
    with existing_store("usage") as store:
        rows = store.usage(args.by, args.since, args.until)
        budgets = budget_lines(store, datetime.now(UTC))
    groups, total, unpriced = summed(rows, args.by, prices)
    if args.json:
        document = report(args, groups, total, prices, unpriced)
        document["budgets"] = [line.as_dict() for line in budgets]
        # printable: every character it escapes is one JSON reads back as it was.
        print(printable(json.dumps(document, ensure_ascii=False)))
    else:
        print_table(args, groups, total, prices, unpriced)
        print_budgets(budgets)
    return 0


@dataclass(frozen=True)
class BudgetLine:
    """One channel's budget in force now, and what its period has spent and holds (calls
    under way); `channel` "*" is a workspace default's, for its channels with none of their
    own."""

    team: str
    channel: str
    kind: str  # daily or monthly
    unit: Unit
    limit: int
    period: str
    spent: int
    held: int

    def as_dict(self) -> dict[str, object]:
        scale = MICRO if self.unit == "usd" else 1
        return {
            "workspace": self.team,
            "channel": self.channel,
            "budget": self.kind,
            "unit": "USD" if self.unit == "usd" else "tokens",
            "period": self.period,
            "limit": self.limit / scale if scale > 1 else self.limit,
            "spent": self.spent / scale if scale > 1 else self.spent,
            "held": self.held / scale if scale > 1 else self.held,
        }

    def text(self) -> str:
        left = f"{one_line(self.team)}/{one_line(self.channel)}"
        shown = shown_amount(self.unit, self.limit)
        spent = shown_amount(self.unit, self.spent)
        held = f", {shown_amount(self.unit, self.held)} held" if self.held else ""
        used = f"{self.spent / self.limit:.0%}" if self.limit else "-"
        return f"{left}  {self.kind} {shown} for {self.period}: {spent} spent ({used}){held}"


def budget_lines(store: Store, now: datetime) -> list[BudgetLine]:
    """The budgets in force (docs/operations.md#spend-limits): each configured channel's
    own over its workspace default's, and each default's; with what the store counted in
    the current UTC day and month (a channel with no call since its budget was set: 0)."""
    day, month = periods(now)
    spend = {
        (team, channel, period, unit): (spent, held)
        for team, channel, period, unit, spent, held in store.spend(None, [day.name, month.name])
    }
    configs = {(c.team, c.channel): c for c in store.channel_configs()}
    keys = set(configs) | {(team, channel) for team, channel, _, _ in spend}
    lines = []
    for team, channel in sorted(keys):
        own = configs.get((team, channel))
        default = configs.get((team, WORKSPACE_DEFAULT))
        limits = limits_of(merged(default, own if channel != WORKSPACE_DEFAULT else None))
        for unit in ("usd", "tokens"):
            for period, limit in zip((day, month), limits.of(unit), strict=True):
                if limit is None:
                    continue
                spent, held = spend.get((team, channel, period.name, unit), (0, 0))
                lines.append(
                    BudgetLine(team, channel, period.kind, unit, limit, period.name, spent, held)
                )
    return lines


def print_budgets(lines: list[BudgetLine]) -> None:
    if not lines:  # the table's last line stays its note
        return
    print("spend limits now (UTC periods; spent as counted against each budget):")
    for line in lines:
        print(printable(line.text()))


def summed(
    rows: list[UsageRow], by: str | None, prices: PriceTable | None
) -> tuple[list[Group], Group, set[str]]:
    """The report's lines (ordered: days by date, the rest most tokens first), the total, and
    the models that had calls but no price."""
    groups: dict[tuple[str | None, ...], Group] = {}
    total, unpriced = Group(()), set[str]()
    for row in rows:
        total.add(row, prices, unpriced)
        if by == "model" and row.model is None and not row.calls:
            continue  # a run's end has no model: answers are only in the total by model
        if by is not None:
            groups.setdefault(row.group, Group(row.group)).add(row, prices, unpriced)
    lines = sorted(groups.values(), key=lambda g: tuple(v or "" for v in g.values))
    if by != "day":
        lines.sort(key=lambda g: -(g.counts["input_tokens"] + g.counts["output_tokens"]))
    return lines, total, unpriced


def report(
    args: argparse.Namespace,
    groups: list[Group],
    total: Group,
    prices: PriceTable | None,
    unpriced: set[str],
) -> dict[str, object]:
    keys = GROUP_KEYS[args.by]
    return {
        "since": when.shown(args.since) if args.since else None,
        "until": when.shown(args.until) if args.until else None,
        "by": args.by,
        "currency": "USD",
        "price_table": prices is not None,
        "unpriced_models": sorted(unpriced),
        "groups": [group.as_dict(keys) for group in groups],
        "total": total.as_dict(()),
    }


def print_table(
    args: argparse.Namespace,
    groups: list[Group],
    total: Group,
    prices: PriceTable | None,
    unpriced: set[str],
) -> None:
    since = when.shown(args.since) if args.since else "the start"
    until = when.shown(args.until) if args.until else "now"
    print(f"usage from {since} to {until}" + (f", by {args.by}" if args.by else ""))
    # The judge's column only where a live judge made calls (ASSISTANT_JUDGE_SAMPLE).
    names = tuple(n for n in COUNTS if n != "judge_calls" or total.counts["judge_calls"])
    header = [args.by or "", *(name.replace("_", " ") for name in names), "cost (USD)"]
    lines = [header, *(group.cells(args.by, names) for group in [*groups, total])]
    widths = [max(len(line[n]) for line in lines) for n in range(len(header))]
    for line in lines:
        cells = [line[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(line[1:], widths[1:], strict=True)]
        print("  ".join(cells).rstrip())
    print(price_note(args.by, prices, unpriced))


def price_note(by: str | None, prices: PriceTable | None, unpriced: set[str]) -> str:
    """What the cost column is, or why it is missing."""
    note = "input tokens include the cached ones"
    if by == "model":
        note += "; answers (runs ended) have no model: counted in the total only"
    if prices is None:
        return f"no price table (ASSISTANT_PRICES): tokens only; {note}"
    if unpriced:
        names = ", ".join(one_line(name) for name in sorted(unpriced))
        return f"no price for {names} in ASSISTANT_PRICES: no cost where it was used; {note}"
    return f"cost estimated from ASSISTANT_PRICES (US dollars per million tokens); {note}"
