"""The App Home's views (README "Configuring channels"), as Block Kit JSON: the home tab
listing a workspace's channel settings, the modal that edits one channel's, and the reading
of that modal's submitted state back into a `ChannelConfig`. Pure: no Slack calls."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from context.channels import WORKSPACE_DEFAULT, ChannelConfig

EDIT_ACTION = "channel_settings_edit"  # a button of the home tab: its value the channel
MODAL = "channel_settings"  # the modal's callback_id; private_metadata: the channel or ""
READ_ONLY = "Only workspace admins, and the people they name, can change these settings."
INHERIT = "inherit"
_SUMMARY_CHARS = 120


def _text(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text}


def _option(value: str, label: str) -> dict[str, Any]:
    return {"text": _text(label), "value": value}


def _where(channel: str) -> str:
    return "Workspace default" if channel == WORKSPACE_DEFAULT else f"<#{channel}>"


def summary(config: ChannelConfig | None) -> str:
    """One configuration in a few words, for the home tab."""
    if config is None:
        return "nothing set: the deployment's persona and model, everyone may use it"
    parts = []
    if config.persona_name:
        parts.append(f"persona *{config.persona_name}*")
    elif config.persona:
        short = config.persona[:_SUMMARY_CHARS] + ("…" if len(config.persona) > 120 else "")
        parts.append(f"persona “{short}”")
    if config.model:
        parts.append(f"model `{config.model}`")
    if config.enabled is not None:
        parts.append("on" if config.enabled else "*off*")
    if config.access == "listed":
        who = [f"<@{u}>" for u in config.users] + [f"<!subteam^{g}>" for g in config.groups]
        parts.append("only " + (", ".join(who) or "no one"))
    elif config.access == "everyone":
        parts.append("everyone may use it")
    if config.editors:
        parts.append("editors " + ", ".join(f"<@{u}>" for u in config.editors))
    return "; ".join(parts) or "nothing set"


def home_view(configs: Sequence[ChannelConfig], may_edit: bool) -> dict[str, Any]:
    """The home tab: the workspace default first, then each configured channel."""
    by_channel = {c.channel: c for c in configs}
    blocks: list[dict[str, Any]] = [{"type": "header", "text": _text("Channel settings")}]
    channels = [WORKSPACE_DEFAULT, *sorted(c for c in by_channel if c != WORKSPACE_DEFAULT)]
    for channel in channels:
        section: dict[str, Any] = {
            "type": "section",
            "block_id": f"channel_{channel}",
            "text": {
                "type": "mrkdwn",
                "text": f"*{_where(channel)}*: {summary(by_channel.get(channel))}",
            },
        }
        if may_edit:
            section["accessory"] = {
                "type": "button", "action_id": EDIT_ACTION, "text": _text("Edit"),
                "value": channel,
            }  # fmt: skip
        blocks.append(section)
    if may_edit:
        blocks.append({
            "type": "actions", "block_id": "add_channel",
            "elements": [{
                "type": "button", "action_id": EDIT_ACTION, "value": "",
                "text": _text("Configure a channel"),
            }],
        })  # fmt: skip
    else:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": READ_ONLY}]})
    return {"type": "home", "blocks": blocks}


def _input(block_id: str, label: str, element: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "input", "block_id": block_id, "optional": block_id != "channel",
        "label": _text(label), "element": {"action_id": "value", **element},
    }  # fmt: skip


def _plain(initial: str | None, multiline: bool = False) -> dict[str, Any]:
    element: dict[str, Any] = {"type": "plain_text_input", "multiline": multiline}
    if initial:
        element["initial_value"] = initial
    return element


def _select(options: list[dict[str, Any]], initial: str | None) -> dict[str, Any]:
    chosen = next(o for o in options if o["value"] == initial)
    return {"type": "static_select", "options": options, "initial_option": chosen}


def edit_modal(
    channel: str, config: ChannelConfig | None, personas: Mapping[str, str]
) -> dict[str, Any]:
    """The modal editing `channel`'s settings ("*": the default; "": a channel to choose)."""
    c = config
    blocks = []
    if not channel:
        blocks.append(_input("channel", "Channel", {"type": "conversations_select"}))
    blocks.append(
        _input("persona", "Persona (the system message)", _plain(c.persona if c else None, True))
    )
    if personas:
        options = [_option(INHERIT, "(none)")] + [_option(n, n) for n in sorted(personas)]
        named = c.persona_name if c and c.persona_name in personas else INHERIT
        blocks.append(_input("persona_name", "Or a named persona", _select(options, named)))
    blocks.append(_input("model", "Model", _plain(c.model if c else None)))
    on = {None: INHERIT, True: "on", False: "off"}[c.enabled if c else None]
    switch = [_option(INHERIT, "As the default"), _option("on", "On"), _option("off", "Off")]
    blocks.append(_input("enabled", "Answers here", _select(switch, on)))
    access = [
        _option(INHERIT, "As the default"),
        _option("everyone", "Everyone"),
        _option("listed", "Only the people and groups below"),
    ]
    blocks.append(_input("access", "Who may use it", _select(access, (c and c.access) or INHERIT)))
    users: dict[str, Any] = {"type": "multi_users_select"}
    if c and c.users:
        users["initial_users"] = list(c.users)
    blocks.append(_input("users", "People", users))
    blocks.append(_input("groups", "User group ids (S…), comma-separated",
                         _plain(", ".join(c.groups) if c else None)))  # fmt: skip
    blocks.append(_input("username", "Post as (name)", _plain(c.username if c else None)))
    blocks.append(
        _input("icon_emoji", "Post with icon (:emoji:)", _plain(c.icon_emoji if c else None))
    )
    if channel == WORKSPACE_DEFAULT:
        editors: dict[str, Any] = {"type": "multi_users_select"}
        if c and c.editors:
            editors["initial_users"] = list(c.editors)
        blocks.append(_input("editors", "Who else may change these settings", editors))
    return {
        "type": "modal", "callback_id": MODAL, "private_metadata": channel,
        "title": _text("Channel settings"), "submit": _text("Save"), "close": _text("Cancel"),
        "blocks": blocks,
    }  # fmt: skip


def submitted(
    team: str, channel: str, state: Mapping[str, Any], user: str
) -> tuple[ChannelConfig | None, dict[str, str]]:
    """The modal's state as settings; or None and the errors by block id (Slack shows each
    under its input: `response_action: errors`)."""

    def value(block: str) -> Any:
        element = (state.get(block) or {}).get("value") or {}
        kind = element.get("type")
        if kind in ("static_select", "conversations_select"):
            chosen = element.get("selected_option") or {}
            return (
                chosen.get("value")
                if kind == "static_select"
                else element.get("selected_conversation")
            )
        if kind == "multi_users_select":
            return tuple(element.get("selected_users") or ())
        return (element.get("value") or "").strip() or None

    channel = channel or value("channel") or ""
    if not channel:
        return None, {"channel": "Choose a channel."}
    named = value("persona_name")
    enabled = value("enabled")
    values: dict[str, Any] = {
        "team": team, "channel": channel, "persona": value("persona"),
        "persona_name": None if named in (None, INHERIT) else named,
        "model": value("model"),
        "enabled": None if enabled in (None, INHERIT) else enabled == "on",
        "access": None if value("access") in (None, INHERIT) else value("access"),
        "users": value("users") or (), "groups": _ids(value("groups")),
        "username": value("username"), "icon_emoji": value("icon_emoji"),
        "editors": value("editors") or (), "updated_by": user,
    }  # fmt: skip
    try:
        return ChannelConfig(**values), {}
    except ValidationError as exc:
        errors: dict[str, str] = {}
        for error in exc.errors():
            block = str(error["loc"][0]) if error["loc"] else "persona"
            if block not in state:
                block = "persona"  # a rule across fields: shown under the persona
            errors.setdefault(block, error["msg"].removeprefix("Value error, ")[:150])
        return None, errors


def _ids(text: str | None) -> tuple[str, ...]:
    return tuple(part for part in re.split(r"[\s,]+", text or "") if part)
