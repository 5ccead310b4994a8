"""The App Home (docs/configuration.md, "Configuring channels"): the home tab shows a workspace's
channel settings, each channel's to the people in it (`users.conversations`) and all of them to the
workspace's admins and owners (`users.info`); the admins, and the people they name, edit them in a
modal; only the admins name those people. Every call takes the client Bolt gives the request, whose
token is the workspace's."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import ENGLISH, LOCALES, N_, Words
from assistant.panel.home_connections import Disconnect, connection_blocks
from assistant.panel.home_memory import (
    MEMORY_TEXT,
    NOT_YOURS,
    memory_blocks,
    memory_modal,
    target,
)
from assistant.panel.home_views import (
    ADMINS_ONLY,
    BUDGET_BLOCKS,
    BUDGETS_ADMINS_ONLY,
    READ_ONLY,
    chosen_channel,
    edit_modal,
    home_view,
    submitted,
)
from assistant.run.approvals.entries import grant_revoked_text
from assistant.run.channels.editors import Role, workspace_role
from assistant.run.channels.languages import Languages
from assistant.slack.connection import slack_reason
from context.channels import WORKSPACE_DEFAULT
from context.entry import now_timestamp
from context.memory import Memory
from context.storage import Store, ThreadKey
from context.storage.async_store import async_store
from context.storage.memory import MemoryRefused

log = logging.getLogger(__name__)


# users.conversations answers at most 999 a page; past this many pages the rest are not asked
# (a person in 99,900 channels sees those).
_MOST_PAGES = 100
_MOST_BLOCKS = 100  # Slack refuses a home tab of more
NOT_IN_CHANNEL = N_("You can change the settings of the channels you are in.")


@dataclass(frozen=True)
class AppHome:
    store: Store  # not ChannelStore alone: `read` needs its local_reads
    personas: Mapping[str, str]  # ASSISTANT_PERSONAS_FILE's, offered in the modal
    languages: Languages | None = None  # None: English
    # A person's sign-ins to the `auth: user` MCP servers (None: the file names none): the
    # home tab lists theirs, and Disconnect revokes one.
    disconnect: Disconnect | None = None

    async def words(self, client: AsyncWebClient, team: str, user: str) -> Words:
        """The viewer's language: their Slack locale, else the workspace default's setting,
        else the deployment's (no channel fixes the App Home's)."""
        if self.languages is None:
            return ENGLISH
        default = await async_store(self.store).read(
            self.store.channel_config, team, WORKSPACE_DEFAULT
        )
        workspace = default.locale if default is not None else None
        return (await self.languages.person(client, team, user, None, workspace)).words

    async def role(self, client: AsyncWebClient, team: str, user: str) -> Role | None:
        """The person's role (assistant/run/channels/editors.py)."""
        return await workspace_role(client, self.store, team, user)

    async def channels_of(self, client: AsyncWebClient, user: str) -> set[str] | None:
        """The channels `user` is in, public and private (Slack lists a private one only if
        the bot is in it too: the only ones whose settings matter); None when Slack cannot
        say, and then they see no channel's settings (less, never more)."""
        found: set[str] = set()
        try:
            answer = await client.users_conversations(
                user=user, types="public_channel,private_channel", limit=999
            )
            pages = 0
            async for page in answer:  # slack-sdk follows next_cursor
                channels = page.get("channels")
                for channel in channels if isinstance(channels, list) else []:
                    if isinstance(channel, dict) and isinstance(channel.get("id"), str):
                        found.add(channel["id"])
                pages += 1
                if pages >= _MOST_PAGES:
                    break
        except SlackApiError as exc:
            log.warning("cannot tell which channels %s is in: %s", user, slack_reason(exc))
            return None
        return found

    async def may_see(
        self, client: AsyncWebClient, user: str, role: Role | None, channel: str
    ) -> bool:
        """Whether `user` may see (and, an editor, change) `channel`'s settings: an admin
        any channel's, anyone the workspace default's, others those of the channels they
        are in."""
        if role == "admin" or channel == WORKSPACE_DEFAULT:
            return True
        return channel in (await self.channels_of(client, user) or set())

    async def show(self, client: AsyncWebClient, team: str, user: str, page: int = 0) -> None:
        """Publish page `page` of the home tab for `user`: the settings of the channels they
        may see, editable for those who may edit, and how many others there are."""
        role = await self.role(client, team, user)
        configs = await async_store(self.store).read(self.store.channel_configs, team)
        shown, mine = configs, None
        if role != "admin":
            mine = await self.channels_of(client, user)
            shown = [c for c in configs if c.is_default or c.channel in (mine or ())]
        hidden = len(configs) - len(shown)
        words = await self.words(client, team, user)
        unsure = mine is None and hidden > 0
        grants = [
            g
            for g in await async_store(self.store).read(self.store.grants, team)
            if role == "admin" or g.channel in (mine or ())
        ]
        # Editors revoke any grant they see; anyone, their own.
        revocable = frozenset(g.id for g in grants if role is not None or g.user == user)
        view = home_view(shown, role is not None, page, hidden, unsure, words, grants, revocable)
        if self.disconnect is not None:
            mine_connected = await async_store(self.store).read(
                self.store.mcp_connections, team, user
            )
            view["blocks"] = [*view["blocks"], *connection_blocks(mine_connected, words)]
        # The memories of the channels whose settings they see (a DM's are its person's, and
        # users.conversations does not list DMs: not shown here).
        seen = None if role == "admin" else [WORKSPACE_DEFAULT, *(mine or ())]
        remembered = [
            m
            for m in await async_store(self.store).read(self.store.team_memories, team, seen)
            if not m.channel.startswith("D")
        ]
        view["blocks"] = [
            *view["blocks"],
            *memory_blocks(
                remembered,
                lambda m: role is not None or m.author == user,
                words,
                room=_MOST_BLOCKS - len(view["blocks"]),
            ),
        ]
        await client.views_publish(user_id=user, view=view)

    async def changeable_memory(
        self, client: AsyncWebClient, team: str, user: str, value: object
    ) -> Memory | None:
        """The memory a click or submission names if `user` may change it, checked here (a
        click is a request anyone signed in could send): one of a channel they may see, and
        they are its editor or the memory's author; else None, logged."""
        named = target(value)
        memory = None
        if named is not None:
            found = await async_store(self.store).read(self.store.memory, team, named[1])
            memory = found if found is not None and found.channel == named[0] else None
        if memory is not None and not memory.channel.startswith("D"):
            role = await self.role(client, team, user)
            if (role is not None or memory.author == user) and await self.may_see(
                client, user, role, memory.channel
            ):
                return memory
        log.warning("%s of %s may not change memory %r: refused", user, team, str(value)[:40])
        return None

    async def open_memory(
        self, client: AsyncWebClient, team: str, user: str, value: object, trigger_id: str
    ) -> None:
        """Open the modal changing the memory an Edit button names, if they may."""
        memory = await self.changeable_memory(client, team, user, value)
        if memory is not None:
            words = await self.words(client, team, user)
            await client.views_open(trigger_id=trigger_id, view=memory_modal(memory, words))

    async def delete_memory(
        self, client: AsyncWebClient, team: str, user: str, value: object
    ) -> None:
        """Forget the memory a Delete button names, if they may (audited `app home`); the tab
        shown again."""
        memory = await self.changeable_memory(client, team, user, value)
        if memory is not None:
            try:
                await async_store(self.store).write(
                    self.store.forget, team, memory.channel, memory.id, user, "app home"
                )
                log.info("%s of %s forgot memory m%d", user, team, memory.id)
            except MemoryRefused:
                pass  # gone meanwhile (a second click): the tab shows it is
        await self.show(client, team, user)

    async def submit_memory(
        self, client: AsyncWebClient, team: str, user: str, view: dict[str, Any]
    ) -> dict[str, str]:
        """Keep the memory modal's text (audited `app home`); the errors to show in it."""
        words = await self.words(client, team, user)
        memory = await self.changeable_memory(client, team, user, view.get("private_metadata"))
        if memory is None:
            return {MEMORY_TEXT: words.gettext(NOT_YOURS)}
        state = view.get("state")
        values = state.get("values") if isinstance(state, dict) else None
        block = values.get(MEMORY_TEXT) if isinstance(values, dict) else None
        element = block.get(MEMORY_TEXT) if isinstance(block, dict) else None
        text = element.get("value") if isinstance(element, dict) else None
        try:
            await async_store(self.store).write(
                self.store.edit_memory,
                team,
                memory.channel,
                memory.id,
                text if isinstance(text, str) else "",
                user,
                "app home",
            )
        except MemoryRefused as exc:
            return {MEMORY_TEXT: str(exc)}
        log.info("%s of %s edited memory m%d", user, team, memory.id)
        return {}

    async def revoke(self, client: AsyncWebClient, team: str, user: str, grant_id: int) -> None:
        """Revoke a grant from its Revoke button, checked again (a click is a request anyone
        signed in could send): an editor who may see its channel, or the person it is for;
        recorded in the thread where it was given; the tab shown again."""
        role = await self.role(client, team, user)
        grants = await async_store(self.store).read(self.store.grants, team)
        grant = next((g for g in grants if g.id == grant_id), None)
        allowed = grant is not None and (
            grant.user == user
            or (role is not None and await self.may_see(client, user, role, grant.channel))
        )
        if grant is None or not allowed:
            log.warning("%s of %s may not revoke grant %d: refused", user, team, grant_id)
            return
        revoked = await async_store(self.store).write(self.store.revoke_grant, team, grant_id, user)
        if revoked is not None:
            key = ThreadKey(team, revoked.channel, revoked.thread_ts)
            if await async_store(self.store).read(self.store.has_thread, key):
                text = grant_revoked_text(revoked)
                await async_store(self.store).write(self.store.append, key, text, now_timestamp())
            log.info("%s of %s revoked grant %d", user, team, grant_id)
        await self.show(client, team, user)

    async def disconnect_from(
        self, client: AsyncWebClient, team: str, user: str, server: str
    ) -> None:
        """The person's own connection to `server` revoked and forgotten (the click's user is
        Slack's word: no one disconnects another), then their tab shown again."""
        if self.disconnect is None:
            return
        await self.disconnect(server[:32], team, user)
        await self.show(client, team, user)

    async def edit(
        self, client: AsyncWebClient, team: str, user: str, channel: str, trigger_id: str
    ) -> None:
        """Open the modal editing `channel` (the trigger is good for 3 s: asked first)."""
        role = await self.role(client, team, user)
        if role is None or (channel and not await self.may_see(client, user, role, channel)):
            log.warning("%s of %s may not edit the settings of %r", user, team, channel)
            return  # a forged or stale click: the tab they see has no such button
        config = (
            await async_store(self.store).read(self.store.channel_config, team, channel)
            if channel
            else None
        )
        words = await self.words(client, team, user)
        view = edit_modal(channel, config, self.personas, role == "admin", words)
        await client.views_open(trigger_id=trigger_id, view=view)

    async def submit(
        self, client: AsyncWebClient, team: str, user: str, view: dict[str, Any]
    ) -> dict[str, str]:
        """Keep what the modal says over what is kept (a field the modal does not show stays
        as it was); the errors to show in it (none: kept). Checked again here: a submission
        is a request anyone signed in could send."""
        values = view.get("state", {}).get("values") if isinstance(view.get("state"), dict) else {}
        state: dict[str, Any] = values if isinstance(values, dict) else {}
        first = next(iter(state), "persona")
        role = await self.role(client, team, user)
        words = await self.words(client, team, user)
        _ = words.gettext
        if role is None:
            log.warning("%s of %s may not change channel settings: refused", user, team)
            return {first: _(READ_ONLY)}
        if role != "admin" and "editors" in state:
            log.warning("%s of %s may not name editors: refused", user, team)
            return {"editors": _(ADMINS_ONLY)}
        channel = chosen_channel(view.get("private_metadata"), state)
        if not channel:
            return {"channel": _("Choose a channel.")}
        if not await self.may_see(client, user, role, channel):
            log.warning("%s of %s is not in %s: its settings refused", user, team, channel)
            return {first: _(NOT_IN_CHANNEL)}
        if role != "admin" and (budgets := [b for b in BUDGET_BLOCKS if b in state]):
            log.warning("%s of %s may not set budgets: refused", user, team)
            return {budgets[0]: _(BUDGETS_ADMINS_ONLY)}
        kept = await async_store(self.store).read(self.store.channel_config, team, channel)
        config, errors = submitted(team, channel, state, user, kept, words)
        if config is None:
            return errors
        # A name the form chose (one kept from before is left alone, as the run resolves it).
        if "persona_name" in state and config.persona_name not in (None, *self.personas):
            return {"persona_name": _("No persona named {name}.", name=config.persona_name)}
        if "locale" in state and config.locale not in (None, *LOCALES):
            return {"locale": _("No language {name}.", name=config.locale)}
        if not config.is_default and config.editors:
            return {first: _("Editors are named in the workspace default.")}
        await async_store(self.store).write(self.store.set_channel_config, config)
        log.info("%s of %s changed the settings of %s", user, team, config.channel)
        return {}
