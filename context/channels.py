"""What a channel is configured to be (docs/configuration.md, "Configuring channels"): its persona,
model, whether the bot answers there, whether follow-ups must mention it (strict mentions),
who may use it, who may write its memory, how its posts are signed, and the tools its runs
have (Slack search and the channel types it covers, the MCP servers or tools); and the
workspace's default, which a channel's unset fields fall back to.

Pure values and rules: the store keeps them (`context.storage.ChannelStore`), the app reads
them (`assistant.run.channels.channel_rules`), the CLI and the App Home write them.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# The row of a workspace's default: no Slack channel id has this shape.
WORKSPACE_DEFAULT = "*"

_SLACK_ID = re.compile(r"^[A-Z0-9]{2,}$")
_EMOJI = re.compile(r"^:[a-z0-9_+'-]+:$")

Access = Literal["everyone", "listed"]
# Who may write a channel's memory (context.memory, which imports this module's default row).
MemoryWriters = Literal["off", "members", "editors"]
# The conversations Slack's search (`assistant.search.context`'s `channel_types`) may cover.
SearchChannelType = Literal["public_channel", "private_channel", "mpim", "im"]
SEARCH_CHANNEL_TYPES: tuple[SearchChannelType, ...] = (
    "public_channel",
    "private_channel",
    "mpim",
    "im",
)
# An entry of `tool_servers`: an MCP server of ASSISTANT_MCP_FILE (`shop`), or one of its
# tools (`shop__lookup_order`), as ASSISTANT_MCP_FILE names servers (assistant.mcp.config) and
# the log tools (context.toolcalls); a tool's whole name is an OpenAI function name (64 at most).
_TOOL_SERVER = re.compile(r"^[A-Za-z0-9-]{1,32}(?:__[A-Za-z0-9_-]{1,64})?$")


class ChannelConfig(BaseModel):
    """One channel's settings (or, `channel == "*"`, the workspace default). A field left
    None takes the workspace default's value, and that one the deployment's settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    team: str = Field(pattern=r"^[A-Z0-9]{2,}$")
    channel: str = Field(pattern=r"^(\*|[A-Z0-9]{2,})$")
    # The system message text (entry 0 of new threads), or a named persona of
    # ASSISTANT_PERSONAS_FILE; at most one of the two.
    persona: str | None = Field(default=None, min_length=1, max_length=20_000)
    persona_name: str | None = Field(default=None, min_length=1, max_length=100)
    model: str | None = Field(default=None, min_length=1, max_length=100)
    enabled: bool | None = None
    # Follow-ups in a thread are answered only when they mention the bot (still recorded).
    strict_mentions: bool | None = None
    access: Access | None = None  # "listed": only `users` and members of `groups`
    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()  # user group ids (S…)
    # Who besides the workspace's admins and owners may change the settings (the default's
    # row only: the people the admins name).
    editors: tuple[str, ...] = ()
    # How the bot's posts are signed (chat:write.customize).
    username: str | None = Field(default=None, min_length=1, max_length=80)
    icon_emoji: str | None = None
    icon_url: str | None = Field(default=None, pattern=r"^https://\S+$")
    # The language of the bot's own words (a message catalog's name: "pt_BR", "ja"). A
    # channel's fixes it there, whatever each person's Slack language; the workspace
    # default's is the language of those whose Slack language has no catalog. Not merged:
    # the run reads both (assistant.run.channels.languages).
    locale: str | None = Field(default=None, pattern=r"^[a-z]{2,3}(_[A-Z]{2})?$")
    # Whether the runs may search Slack (`searchSlack`, as the person who asked), and in
    # which conversation types; None: the default's (ASSISTANT_SLACK_SEARCH…).
    slack_search: bool | None = None
    search_channel_types: tuple[SearchChannelType, ...] | None = Field(default=None, min_length=1)
    # The MCP servers (`shop`) or tools (`shop__lookup_order`) the runs have; (): none;
    # None: the default's, at the end every server of ASSISTANT_MCP_FILE.
    tool_servers: tuple[str, ...] | None = Field(default=None, max_length=100)
    # Spend limits (docs/operations.md#spend-limits) per UTC day and month: in US dollars of
    # ASSISTANT_PRICES for the models it prices, in tokens for the others; None: the
    # default's (a workspace default's is each channel's own budget, not a shared one).
    daily_budget: float | None = Field(default=None, ge=0, le=1_000_000, allow_inf_nan=False)
    monthly_budget: float | None = Field(default=None, ge=0, le=1_000_000, allow_inf_nan=False)
    daily_token_budget: int | None = Field(default=None, ge=0, le=10**12, strict=True)
    monthly_token_budget: int | None = Field(default=None, ge=0, le=10**12, strict=True)
    # Who may ask the runs to remember or forget for the channel (rememberForChannel,
    # forgetForChannel): off, members (anyone the bot answers there), editors; None: the
    # default's, at the end members (context.memory).
    memory: MemoryWriters | None = None
    updated_by: str | None = None
    updated_at: str | None = None

    @field_validator("users", "groups", "editors")
    @classmethod
    def _slack_ids(cls, ids: tuple[str, ...]) -> tuple[str, ...]:
        for one in ids:
            if not _SLACK_ID.match(one):
                raise ValueError(f"{one!r} is not a Slack id")
        return tuple(dict.fromkeys(ids))  # each once, in the order given

    @field_validator("search_channel_types")
    @classmethod
    def _each_type_once(cls, types: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return None if types is None else tuple(dict.fromkeys(types))

    @field_validator("tool_servers")
    @classmethod
    def _tool_servers(cls, names: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if names is None:
            return None
        for name in names:
            if len(name) > 64 or not _TOOL_SERVER.match(name):
                raise ValueError(
                    f"{name[:80]!r} is not an MCP server name or server__tool "
                    "(a server: letters, digits and -; then __ and a tool; at most 64 in all)"
                )
        return tuple(dict.fromkeys(names))

    @field_validator("icon_emoji")
    @classmethod
    def _emoji(cls, value: str | None) -> str | None:
        if value is not None and not _EMOJI.match(value):
            raise ValueError(f"{value!r} is not an emoji code like :robot_face:")
        return value

    @model_validator(mode="after")
    def _one_of_each(self) -> ChannelConfig:
        if self.persona is not None and self.persona_name is not None:
            raise ValueError("set persona or persona_name, not both")
        if self.icon_emoji is not None and self.icon_url is not None:
            raise ValueError("set icon_emoji or icon_url, not both")
        return self

    @property
    def is_default(self) -> bool:
        return self.channel == WORKSPACE_DEFAULT


# The fields a channel inherits from its workspace's default when it leaves them unset.
_INHERITED = (
    "model",
    "enabled",
    "strict_mentions",
    "access",
    "username",
    "icon_emoji",
    "icon_url",
    "slack_search",
    "search_channel_types",
    "tool_servers",
    "daily_budget",
    "monthly_budget",
    "daily_token_budget",
    "monthly_token_budget",
    "memory",
)


def merged(default: ChannelConfig | None, channel: ChannelConfig | None) -> dict[str, object]:
    """The channel's values over the default's: each field unset in the channel (None) from
    the default. A persona, text or named, is one field: a channel that sets either one
    replaces both of the default's. Access lists go with `access`."""
    values: dict[str, object] = {name: None for name in _INHERITED}
    values.update(persona=None, persona_name=None, users=(), groups=())
    for layer in (default, channel):
        if layer is None:
            continue
        for name in _INHERITED:
            if getattr(layer, name) is not None:
                values[name] = getattr(layer, name)
        if layer.persona is not None or layer.persona_name is not None:
            values.update(persona=layer.persona, persona_name=layer.persona_name)
        if layer.access is not None:
            values.update(users=layer.users, groups=layer.groups)
    return values


def may_use(access: Access | None, users: tuple[str, ...], user: str, in_group: bool) -> bool:
    """Whether `user` may use the bot under these access settings (`in_group`: whether they
    are a member of one of the listed groups, which the caller asked Slack)."""
    return access != "listed" or user in users or in_group
