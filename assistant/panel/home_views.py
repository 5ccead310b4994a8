"""The App Home's views (docs/configuration.md, "Configuring channels"), as Block Kit JSON: the home
tab listing a workspace's channel settings, a page at a time, the modal that edits one channel's,
and the reading of that modal's submitted state back into a `ChannelConfig`. Pure: no Slack calls.

Every view keeps within Block Kit's documented limits (docs.slack.dev, reference/block-kit),
which Slack enforces by refusing the whole view: 100 blocks a view, 3000 characters a section's
text and a text input's value, 100 options a select (or 100 groups of 100)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from assistant.i18n.words import ENGLISH, LOCALES, N_, Words, language_name
from context.channels import SEARCH_CHANNEL_TYPES, WORKSPACE_DEFAULT, ChannelConfig
from context.spend import parse_amounts, written_amounts
from context.storage import Grant

EDIT_ACTION = "channel_settings_edit"  # a button of the home tab: its value the channel
PAGE_ACTION = "channel_settings_page"  # the home tab's previous/next buttons: the page's number
REVOKE_ACTION = "approval_grant_revoke"  # a grant's Revoke button: its value the grant's id
MAX_GRANTS = 20  # grants listed on the tab (the oldest first); the rest counted
MODAL = "channel_settings"  # the modal's callback_id; private_metadata: the channel or ""
READ_ONLY = N_("Only workspace admins, and the people they name, can change these settings.")
ADMINS_ONLY = N_("Only workspace admins and owners name the editors.")
BUDGETS_ADMINS_ONLY = N_("Only workspace admins and owners set the budgets.")
# The modal's spend limits (docs/operations.md#spend-limits): admins only.
BUDGET_BLOCKS = ("daily_budget", "monthly_budget")
INHERIT = "inherit"
NO_TOOL_SERVERS = "none"  # typed in the tool servers' input: no MCP server at all
PAGE_SIZE = 40  # channels a page of the home tab: with the rest, well under 100 blocks
MAX_TEXT = 3000  # a section's text, a plain-text input's value
MAX_OPTIONS = 100  # a static select's options, or its option groups, or a group's options
_OPTION_TEXT = 75
_SUMMARY_CHARS = 120
_LISTED = 10  # people or groups named in a summary; the rest counted


def _text(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text}


def _option(value: str, label: str) -> dict[str, Any]:
    return {"text": _text(label), "value": value}


def _where(channel: str, words: Words) -> str:
    return words.gettext("Workspace default") if channel == WORKSPACE_DEFAULT else f"<#{channel}>"


def summary(config: ChannelConfig | None, words: Words = ENGLISH) -> str:
    """One configuration in a few words, for the home tab."""
    _ = words.gettext
    if config is None:
        return _("nothing set: the deployment's persona and model, everyone may use it")
    parts = []
    if config.persona_name:
        parts.append(_("persona *{name}*", name=config.persona_name))
    elif config.persona:
        short = config.persona[:_SUMMARY_CHARS] + ("…" if len(config.persona) > 120 else "")
        parts.append(_("persona “{text}”", text=short))
    if config.model:
        parts.append(_("model `{model}`", model=config.model))
    if config.enabled is not None:
        parts.append(_("on") if config.enabled else _("*off*"))
    if config.strict_mentions is not None:
        parts.append(
            _("follow-ups only when mentioned") if config.strict_mentions else _("every follow-up")
        )
    if config.access == "listed":
        who = [f"<@{u}>" for u in config.users] + [f"<!subteam^{g}>" for g in config.groups]
        parts.append(_("only {who}", who=_few(who, words)) if who else _("only no one"))
    elif config.access == "everyone":
        parts.append(_("everyone may use it"))
    if config.slack_search is not None:
        parts.append(_("Slack search") if config.slack_search else _("*no* Slack search"))
    if config.search_channel_types:
        parts.append(_("search in {types}", types=", ".join(config.search_channel_types)))
    if config.tool_servers is not None:
        named = [f"`{n}`" for n in config.tool_servers]
        parts.append(_("tools {names}", names=_few(named, words)) if named else _("*no* MCP tools"))
    if config.editors:
        parts.append(_("editors {who}", who=_few([f"<@{u}>" for u in config.editors], words)))
    if config.locale:
        parts.append(_("language {name}", name=language_name(config.locale)))
    parts += _budgets(config, words)
    return _("; ").join(parts) or _("nothing set")


def _budgets(config: ChannelConfig, words: Words) -> list[str]:
    """The summary's spend limits, dollars with their sign: `daily budget $5, 200000 tokens`."""
    parts = []
    daily = written_amounts(config.daily_budget, config.daily_token_budget)
    monthly = written_amounts(config.monthly_budget, config.monthly_token_budget)
    for written, text in (
        (daily, N_("daily budget {amount}")),
        (monthly, N_("monthly budget {amount}")),
    ):
        if written is not None:
            shown = ", ".join(p if p.endswith("tokens") else f"${p}" for p in written.split(", "))
            parts.append(words.gettext(text, amount=shown))
    return parts


def _few(names: list[str], words: Words) -> str:
    rest = len(names) - _LISTED
    listed = words.gettext(", ").join(names[:_LISTED])
    if rest <= 0:
        return listed
    return words.ngettext("{names} and {n} more", "{names} and {n} more", rest, names=listed)


def _capped(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _button(action_id: str, label: str, value: str) -> dict[str, Any]:
    return {"type": "button", "action_id": action_id, "text": _text(label), "value": value}


def _note(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": _capped(text, MAX_TEXT)}]}


def home_view(
    configs: Sequence[ChannelConfig],
    may_edit: bool,
    page: int = 0,
    hidden: int = 0,
    unsure: bool = False,
    words: Words = ENGLISH,
    grants: Sequence[Grant] = (),
    revocable: frozenset[int] = frozenset(),
) -> dict[str, Any]:
    """The home tab: the workspace default first, then page `page` of the configured channels
    `configs` holds (the ones this person may see), with buttons to the pages beside it;
    `hidden`: how many other channels have settings not shown to this person (`unsure`:
    because Slack could not say which channels they are in), in `words`' language. Then the
    `grants` this person may see, a Revoke button on those in `revocable`."""
    _ = words.gettext
    by_channel = {c.channel: c for c in configs}
    channels = sorted(c for c in by_channel if c != WORKSPACE_DEFAULT)
    pages = max(1, math.ceil(len(channels) / PAGE_SIZE))
    page = min(max(page, 0), pages - 1)
    shown = channels[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
    blocks: list[dict[str, Any]] = [{"type": "header", "text": _text(_("Channel settings"))}]
    for channel in [WORKSPACE_DEFAULT, *shown]:
        text = f"*{_where(channel, words)}*: {summary(by_channel.get(channel), words)}"
        section: dict[str, Any] = {
            "type": "section",
            "block_id": f"channel_{channel}",
            "text": {"type": "mrkdwn", "text": _capped(text, MAX_TEXT)},
        }
        if may_edit:
            section["accessory"] = _button(EDIT_ACTION, _("Edit"), channel)
        blocks.append(section)
    if pages > 1:
        first = page * PAGE_SIZE + 1
        last, total = first + len(shown) - 1, len(channels)
        blocks.append(
            _note(_("Channels {first} to {last} of {total}.", first=first, last=last, total=total))
        )
        turns = []
        if page > 0:
            turns.append(_button(PAGE_ACTION, _("Previous page"), str(page - 1)))
        if page < pages - 1:
            turns.append(_button(PAGE_ACTION, _("Next page"), str(page + 1)))
        blocks.append({"type": "actions", "block_id": "pages", "elements": turns})
    if hidden:
        note = words.ngettext(
            "{n} more channel has settings shown only to its members and to workspace admins.",
            "{n} more channels have settings shown only to their members and to workspace admins.",
            hidden,
        )
        if unsure:
            why = _("Slack could not say which channels you are in: open this tab again later.")
            note = f"{note} {why}"
        blocks.append(_note(note))
    if may_edit:
        blocks.append(
            {
                "type": "actions",
                "block_id": "add_channel",
                "elements": [_button(EDIT_ACTION, _("Configure a channel"), "")],
            }
        )
    else:
        blocks.append(_note(_(READ_ONLY)))
    blocks.extend(grant_blocks(grants, revocable, words))
    return {"type": "home", "blocks": blocks}


def grant_blocks(
    grants: Sequence[Grant], revocable: frozenset[int], words: Words = ENGLISH
) -> list[dict[str, Any]]:
    """The grants (docs/slack-features.md#grants): which tool runs without asking, for whom,
    where, given by whom; none, no blocks."""
    if not grants:
        return []
    _ = words.gettext
    blocks: list[dict[str, Any]] = [{"type": "header", "text": _text(_("Always allowed tools"))}]
    for grant in grants[:MAX_GRANTS]:
        whom = _("everyone") if grant.user is None else f"<@{grant.user}>"
        text = _(
            "*{tool}* runs without asking for {whom} in <#{channel}> (given by <@{by}>).",
            tool=grant.qualified,
            whom=whom,
            channel=grant.channel,
            by=grant.granted_by,
        )
        section: dict[str, Any] = {
            "type": "section",
            "block_id": f"grant_{grant.id}",
            "text": {"type": "mrkdwn", "text": _capped(text, MAX_TEXT)},
        }
        if grant.id in revocable:
            section["accessory"] = _button(REVOKE_ACTION, _("Revoke"), str(grant.id))
        blocks.append(section)
    if len(grants) > MAX_GRANTS:
        more = len(grants) - MAX_GRANTS
        blocks.append(_note(words.ngettext("{n} more grant.", "{n} more grants.", more)))
    return blocks


def _input(block_id: str, label: str, element: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "input",
        "block_id": block_id,
        "optional": block_id != "channel",
        "label": _text(label),
        "element": {"action_id": "value", **element},
    }


def _plain(initial: str | None, multiline: bool = False) -> dict[str, Any]:
    element: dict[str, Any] = {"type": "plain_text_input", "multiline": multiline}
    if initial:
        element["initial_value"] = initial
    return element


def _select(
    options: list[dict[str, Any]], initial: str | None, words: Words = ENGLISH
) -> dict[str, Any]:
    chosen = next(o for o in options if o["value"] == initial)
    if len(options) <= MAX_OPTIONS:
        return {"type": "static_select", "options": options, "initial_option": chosen}
    groups = [
        {
            "label": _text(
                words.gettext(
                    "{first} to {last} of {total}",
                    first=n + 1,
                    last=min(n + MAX_OPTIONS, len(options)),
                    total=len(options),
                )
            ),
            "options": options[n : n + MAX_OPTIONS],
        }
        for n in range(0, len(options), MAX_OPTIONS)
    ]
    return {"type": "static_select", "option_groups": groups, "initial_option": chosen}


def _persona_name(
    config: ChannelConfig | None, personas: Mapping[str, str], words: Words
) -> dict[str, Any]:
    named = config.persona_name if config and config.persona_name in personas else INHERIT
    if len(personas) >= MAX_OPTIONS * MAX_OPTIONS:  # more than a select holds: typed
        return _plain(None if named == INHERIT else named)
    options = [_option(INHERIT, words.gettext("(none)"))] + [
        _option(n, _capped(n, _OPTION_TEXT)) for n in sorted(personas)
    ]
    return _select(options, named, words)


def edit_modal(
    channel: str,
    config: ChannelConfig | None,
    personas: Mapping[str, str],
    admin: bool = True,
    words: Words = ENGLISH,
) -> dict[str, Any]:
    """The modal editing `channel`'s settings ("*": the default; "": a channel to choose).
    What it does not show (`icon_url`, a persona longer than a text input holds, the
    editors to anyone but an admin) is kept as it is when the modal is saved."""
    c, _ = config, words.gettext
    blocks = []
    if not channel:
        blocks.append(_input("channel", _("Channel"), {"type": "conversations_select"}))
    if c and c.persona and len(c.persona) > MAX_TEXT:
        blocks.append(
            _note(
                _(
                    "The persona is {length} characters, more than a Slack text input holds"
                    " ({most}): saving keeps it. Change it with `assistant channels set`, or"
                    " choose a named persona below.",
                    length=f"{len(c.persona):,}",
                    most=f"{MAX_TEXT:,}",
                )
            )
        )
    else:
        persona = _plain(c.persona if c else None, True)
        blocks.append(_input("persona", _("Persona (the system message)"), persona))
    if personas:
        named = _persona_name(c, personas, words)
        blocks.append(_input("persona_name", _("Or a named persona"), named))
    blocks.append(_input("model", _("Model"), _plain(c.model if c else None)))
    on = {None: INHERIT, True: "on", False: "off"}[c.enabled if c else None]
    default = _option(INHERIT, _("As the default"))
    switch = [default, _option("on", _("On")), _option("off", _("Off"))]
    blocks.append(_input("enabled", _("Answers here"), _select(switch, on)))
    strict = {None: INHERIT, True: "strict", False: "any"}[c.strict_mentions if c else None]
    followups = [
        default,
        _option("any", _("Every follow-up in its threads")),
        _option("strict", _("Only follow-ups that mention it")),
    ]
    blocks.append(_input("strict_mentions", _("Answers follow-ups"), _select(followups, strict)))
    access = [
        default,
        _option("everyone", _("Everyone")),
        _option("listed", _("Only the people and groups below")),
    ]
    chosen = _select(access, (c and c.access) or INHERIT)
    blocks.append(_input("access", _("Who may use it"), chosen))
    users: dict[str, Any] = {"type": "multi_users_select"}
    if c and c.users:
        users["initial_users"] = list(c.users)
    blocks.append(_input("users", _("People"), users))
    groups = ", ".join(c.groups) if c else ""
    if c and len(groups) > MAX_TEXT:
        blocks.append(
            _note(
                words.ngettext(
                    "{n} user group is listed, more than a Slack text input holds: saving keeps it."
                    " Change it with `assistant channels set`.",
                    "{n} user groups are listed, more than a Slack text input holds: saving keeps"
                    " them. Change them with `assistant channels set`.",
                    len(c.groups),
                )
            )
        )
    else:
        label = _("User group ids (S…), comma-separated")
        blocks.append(_input("groups", label, _plain(groups)))
    blocks.append(_input("username", _("Post as (name)"), _plain(c.username if c else None)))
    icon = _plain(c.icon_emoji if c else None)
    blocks.append(_input("icon_emoji", _("Post with icon (:emoji:)"), icon))
    languages = [
        _option(INHERIT, _("Each person's Slack language")),
        *(_option(locale, language_name(locale)) for locale in LOCALES),
    ]
    if channel == WORKSPACE_DEFAULT:
        languages[0] = _option(INHERIT, _("Each person's Slack language, else the deployment's"))
    kept = c.locale if c and c.locale in LOCALES else INHERIT
    blocks.append(_input("locale", _("Language of my messages"), _select(languages, kept)))
    search = {None: INHERIT, True: "on", False: "off"}[c.slack_search if c else None]
    blocks.append(
        _input("slack_search", _("Slack search (as the person who asked)"), _select(switch, search))
    )
    kinds: dict[str, Any] = {
        "type": "multi_static_select",
        "options": [_option(kind, kind) for kind in SEARCH_CHANNEL_TYPES],
    }
    if c and c.search_channel_types:
        kinds["initial_options"] = [_option(k, k) for k in c.search_channel_types]
    blocks.append(_input("search_channel_types", _("Slack search covers"), kinds))
    servers = None if not c or c.tool_servers is None else ", ".join(c.tool_servers)
    label = _("MCP servers or tools (shop, shop__lookup_order; {none}: none)", none=NO_TOOL_SERVERS)
    blocks.append(
        _input("tool_servers", label, _plain(servers if servers != "" else NO_TOOL_SERVERS))
    )
    if admin:
        daily = written_amounts(c.daily_budget, c.daily_token_budget) if c else None
        monthly = written_amounts(c.monthly_budget, c.monthly_token_budget) if c else None
        hint = _("US dollars, tokens for a model without a price, or both: 5, 200000 tokens")
        daily_input = {**_plain(daily), "placeholder": _text(hint)}
        monthly_input = {**_plain(monthly), "placeholder": _text(hint)}
        blocks.append(_input("daily_budget", _("Daily budget (UTC day)"), daily_input))
        blocks.append(_input("monthly_budget", _("Monthly budget (UTC month)"), monthly_input))
    if channel == WORKSPACE_DEFAULT and admin:
        editors: dict[str, Any] = {"type": "multi_users_select"}
        if c and c.editors:
            editors["initial_users"] = list(c.editors)
        blocks.append(_input("editors", _("Who else may change these settings"), editors))
    return {
        "type": "modal",
        "callback_id": MODAL,
        "private_metadata": channel,
        "title": _text(_("Channel settings")),
        "submit": _text(_("Save")),
        "close": _text(_("Cancel")),
        "blocks": blocks,
    }


# The modal's inputs (block ids) and the fields each sets; a field no input of the submitted
# modal sets is kept as it was (`icon_url` is never shown).
_FIELDS_OF = {
    "persona": ("persona",),
    "persona_name": ("persona_name",),
    "model": ("model",),
    "enabled": ("enabled",),
    "strict_mentions": ("strict_mentions",),
    "access": ("access",),
    "users": ("users",),
    "groups": ("groups",),
    "username": ("username",),
    "icon_emoji": ("icon_emoji",),
    "editors": ("editors",),
    "locale": ("locale",),
    "slack_search": ("slack_search",),
    "search_channel_types": ("search_channel_types",),
    "tool_servers": ("tool_servers",),
    "daily_budget": ("daily_budget", "daily_token_budget"),
    "monthly_budget": ("monthly_budget", "monthly_token_budget"),
}
_BLOCK_OF = {field: block for block, fields in _FIELDS_OF.items() for field in fields}
# Set in the modal, each one replaces the kept value of the other of its pair (a config
# holds one persona, one icon).
_ONE_OF = {"persona": "persona_name", "persona_name": "persona", "icon_emoji": "icon_url"}


def _element(state: Mapping[str, Any], block: str) -> dict[str, Any]:
    found = state.get(block)
    element = found.get("value") if isinstance(found, dict) else None
    return element if isinstance(element, dict) else {}


def _value(state: Mapping[str, Any], block: str) -> Any:
    element = _element(state, block)
    kind = element.get("type")
    if kind == "static_select":
        chosen = element.get("selected_option")
        return chosen.get("value") if isinstance(chosen, dict) else None
    if kind == "conversations_select":
        return element.get("selected_conversation")
    if kind == "multi_users_select":
        users = element.get("selected_users")
        return tuple(users) if isinstance(users, list) else ()
    if kind == "multi_static_select":
        chosen = element.get("selected_options")
        options = chosen if isinstance(chosen, list) else []
        return tuple(o.get("value") for o in options if isinstance(o, dict))
    text = element.get("value")
    return text.strip() or None if isinstance(text, str) else None


def chosen_channel(metadata: Any, state: Mapping[str, Any]) -> str:
    """The channel a submitted modal edits: its private_metadata, or the one chosen in it."""
    if isinstance(metadata, str) and metadata:
        return metadata
    chosen = _value(state, "channel")
    return chosen if isinstance(chosen, str) else ""


def submitted(
    team: str,
    channel: str,
    state: Mapping[str, Any],
    user: str,
    kept: ChannelConfig | None = None,
    words: Words = ENGLISH,
) -> tuple[ChannelConfig | None, dict[str, str]]:
    """The modal's state over the settings `kept` (what its inputs do not set stays as it
    was); or None and the errors by block id (Slack shows each under its input:
    `response_action: errors`), in `words`' language around the check's own English detail."""
    named, enabled, access, locale, search = (
        _value(state, b) for b in ("persona_name", "enabled", "access", "locale", "slack_search")
    )
    strict = _value(state, "strict_mentions")
    form: dict[str, Any] = {
        "persona": _value(state, "persona"),
        "persona_name": None if named in (None, INHERIT) else named,
        "model": _value(state, "model"),
        "enabled": None if enabled in (None, INHERIT) else enabled == "on",
        "strict_mentions": None if strict in (None, INHERIT) else strict == "strict",
        "access": None if access in (None, INHERIT) else access,
        "users": _value(state, "users") or (),
        "groups": _ids(_value(state, "groups")),
        "username": _value(state, "username"),
        "icon_emoji": _value(state, "icon_emoji"),
        "editors": _value(state, "editors") or (),
        "locale": None if locale in (None, INHERIT) else locale,
        "slack_search": None if search in (None, INHERIT) else search == "on",
        "search_channel_types": _value(state, "search_channel_types") or None,
        "tool_servers": _servers(_value(state, "tool_servers")),
    }
    budget_errors: dict[str, str] = {}
    for kind in ("daily", "monthly"):
        try:
            dollars, tokens = parse_amounts(_value(state, f"{kind}_budget") or "")
        except ValueError as exc:
            detail = str(exc)[:150]
            if words.locale != ENGLISH.locale:
                detail = words.gettext("Not a valid value: {detail}", detail=detail)
            budget_errors[f"{kind}_budget"] = detail
            continue
        form[f"{kind}_budget"], form[f"{kind}_token_budget"] = dollars, tokens
    if budget_errors:
        return None, budget_errors
    shown = {field for block in state for field in _FIELDS_OF.get(block, ())}
    values = kept.model_dump(exclude={"updated_by", "updated_at"}) if kept else {}
    values.update({field: form[field] for field in shown})
    for field, other in _ONE_OF.items():
        if field in shown and form[field] is not None and other not in shown:
            values[other] = None
    values.update(team=team, channel=channel, updated_by=user)
    try:
        return ChannelConfig(**values), {}
    except ValidationError as exc:
        errors: dict[str, str] = {}
        first = next(iter(state), "persona")
        for error in exc.errors():
            block = str(error["loc"][0]) if error["loc"] else first
            block = _BLOCK_OF.get(block, block)
            if block not in state:
                block = "persona" if "persona" in state else first  # a rule across fields
            detail = error["msg"].removeprefix("Value error, ")[:150]
            if words.locale != ENGLISH.locale:  # pydantic's words are English only
                detail = words.gettext("Not a valid value: {detail}", detail=detail)
            errors.setdefault(block, detail)
        return None, errors


def _servers(text: str | None) -> tuple[str, ...] | None:
    """The tool servers' input: empty for the default's, `none` for none, else names."""
    if text is None:
        return None
    return () if text.strip().lower() == NO_TOOL_SERVERS else _ids(text)


def _ids(text: str | None) -> tuple[str, ...]:
    return tuple(part for part in re.split(r"[\s,]+", text or "") if part)
