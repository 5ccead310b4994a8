"""What applies in a channel now (docs/configuration.md, "Configuring channels"): its settings over
its workspace's default (`context.channels.merged`), over the deployment's own (the persona of
ASSISTANT_PROMPT…, ASSISTANT_MODEL, everyone may use it, Slack search as ASSISTANT_SLACK_SEARCH…
says, every MCP server)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal, TypedDict

from context.channels import Access, ChannelConfig, MemoryWriters, SearchChannelType, merged
from context.memory import DEFAULT_WRITERS
from context.spend import SpendLimits, limits_of
from context.storage import Store
from context.storage.async_store import async_store

log = logging.getLogger(__name__)


class PostAs(TypedDict, total=False):
    """The name and icon a channel's posts carry (chat:write.customize)."""

    username: str
    icon_emoji: str
    icon_url: str


@dataclass(frozen=True)
class ChannelRules:
    # Entry 0 of a thread started now: asked for only when a thread starts (the deployment's
    # own is a read of ASSISTANT_PROMPT_FILE, which no other event or run needs).
    persona: Callable[[], str]
    model: str | None  # None: the deployment's ASSISTANT_MODEL
    enabled: bool
    access: Access | None
    users: tuple[str, ...]
    groups: tuple[str, ...]
    # chat.postMessage / chat.startStream arguments: username, icon_emoji or icon_url.
    post_as: PostAs = field(default_factory=PostAs)
    # Follow-ups in a thread are owed an answer only when they mention the bot.
    strict_mentions: bool = False
    # The language the channel's own settings fix, and the workspace default's (for people
    # whose Slack language has no catalog): assistant.run.channels.languages.
    locale: str | None = None
    workspace_locale: str | None = None
    search: SlackSearch | None = None  # None: searchSlack is not offered
    # The MCP servers (`shop`) or tools (`shop__lookup_order`) its runs have; None: every one.
    tool_servers: tuple[str, ...] | None = None
    # Its budgets (docs/operations.md#spend-limits), its own over the default's.
    limits: SpendLimits = field(default_factory=SpendLimits)
    # Who may ask its runs to remember or forget for it (context.memory).
    memory: MemoryWriters = DEFAULT_WRITERS


@dataclass(frozen=True)
class SlackSearch:
    """Slack search where it is on: the conversation types it may cover, and those the
    settings allow that the thread's readers keep it from (`withheld`: see `in_channel`)."""

    channel_types: tuple[SearchChannelType, ...] = ("public_channel",)
    withheld: tuple[SearchChannelType, ...] = ()

    @property
    def private(self) -> bool:
        """Whether it covers conversations not everyone in the workspace may read."""
        return any(kind != "public_channel" for kind in self.channel_types)

    def public(self) -> SlackSearch | None:
        """Public channels alone, of the types it covers (None: it covers none)."""
        if "public_channel" not in self.channel_types:
            return None
        hidden = (*self.withheld, *(t for t in self.channel_types if t != "public_channel"))
        return SlackSearch(("public_channel",), hidden)

    def in_channel(self, channel: str) -> SlackSearch | None:
        """What a run in `channel` may search, whatever the settings allow: private
        channels, group DMs and DMs only in a DM (`D…`), the one place where the person
        asking alone reads the answer (their DM with the app, the agent panel's threads);
        elsewhere the thread's other readers would see what only the asker may (None:
        nothing is left to search). A DM is checked again at the call
        (`assistant.run.tools.search_slack`): whose DM it is."""
        return self if channel.startswith("D") else self.public()


@dataclass(frozen=True)
class SearchDefault:
    """The deployment's own (ASSISTANT_SLACK_SEARCH, ASSISTANT_SLACK_SEARCH_CHANNEL_TYPES)."""

    on: bool = False
    channel_types: tuple[SearchChannelType, ...] = ("public_channel",)


@dataclass(frozen=True)
class Channels:
    """`personas`: the named personas of ASSISTANT_PERSONAS_FILE; `own_persona`: the
    deployment's (read when a thread starts: ASSISTANT_PROMPT_FILE may change between
    threads, see `assistant.settings.persona_file.PromptFile`)."""

    store: Store  # not ChannelStore alone: `read` needs its local_reads
    own_persona: Callable[[], str]
    personas: Mapping[str, str] = field(default_factory=dict)
    search: SearchDefault = field(default_factory=SearchDefault)

    async def rules(self, team: str, channel: str) -> ChannelRules:
        """What applies in `channel` of `team` now (a store read, off the event loop)."""
        default, own = await async_store(self.store).read(
            self.store.channel_configs_in_force, team, channel
        )
        rules = self.rules_of(default, own)
        if rules.search is None:
            return rules
        return replace(rules, search=rules.search.in_channel(channel))

    def rules_of(self, default: ChannelConfig | None, own: ChannelConfig | None) -> ChannelRules:
        values: dict[str, Any] = merged(default, own)
        persona = values["persona"]
        name = values["persona_name"]
        if name is not None:
            persona = self.personas.get(name)
            if persona is None:  # the file changed since it was chosen
                log.warning("no persona %r in ASSISTANT_PERSONAS_FILE: the default is used", name)
        post_as: PostAs = {}
        key: Literal["username", "icon_emoji", "icon_url"]
        for key in ("username", "icon_emoji", "icon_url"):
            if values[key] is not None:
                post_as[key] = values[key]
        return ChannelRules(
            persona=partial(str, persona) if persona else self.own_persona,
            model=values["model"],
            enabled=values["enabled"] is not False,
            access=values["access"],
            users=values["users"],
            groups=values["groups"],
            post_as=post_as,
            locale=own.locale if own is not None and not own.is_default else None,
            workspace_locale=default.locale if default is not None else None,
            search=self._search(values),
            tool_servers=values["tool_servers"],
            strict_mentions=values["strict_mentions"] is True,
            limits=limits_of(values, _budget_setter(default, own)),
            memory=values["memory"] or DEFAULT_WRITERS,
        )

    def _search(self, values: dict[str, Any]) -> SlackSearch | None:
        on = values["slack_search"]
        if not (self.search.on if on is None else on):
            return None
        return SlackSearch(values["search_channel_types"] or self.search.channel_types)


_BUDGETS = ("daily_budget", "monthly_budget", "daily_token_budget", "monthly_token_budget")


def _budget_setter(default: ChannelConfig | None, own: ChannelConfig | None) -> str | None:
    """Who set the channel's budgets in Slack (the App Home writes their user id): its own
    settings' if they set one, else the default's; None when the CLI did (`cli`)."""
    for layer in (own, default):
        if layer is not None and any(getattr(layer, name) is not None for name in _BUDGETS):
            by = layer.updated_by
            return by if by and by[:1] in ("U", "W") else None
    return None
