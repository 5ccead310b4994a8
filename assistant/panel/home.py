"""The App Home (README "Configuring channels"): the home tab shows a workspace's channel
settings to anyone who opens it; its admins and owners (`users.info`), and the people they
name, edit them in a modal. Every call takes the client Bolt gives the request, whose token
is the workspace's."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.panel.home_views import READ_ONLY, edit_modal, home_view, submitted
from assistant.slack.connection import slack_reason
from context.channels import WORKSPACE_DEFAULT
from context.storage import Store
from context.storage.reads import read

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AppHome:
    store: Store  # not ChannelStore alone: `read` needs its local_reads
    personas: Mapping[str, str]  # ASSISTANT_PERSONAS_FILE's, offered in the modal

    async def may_edit(self, client: AsyncWebClient, team: str, user: str) -> bool:
        """An admin or owner of the workspace, or one of the editors they named. Asked of
        Slack each time: a person's role may have changed since."""
        default = await read(self.store, self.store.channel_config, team, WORKSPACE_DEFAULT)
        if default is not None and user in default.editors:
            return True
        try:
            found = (await client.users_info(user=user))["user"]
        except SlackApiError as exc:
            log.warning("cannot tell whether %s is an admin: %s", user, slack_reason(exc))
            return False  # not known to be one: read-only
        return bool(found.get("is_admin") or found.get("is_owner") or found.get("is_primary_owner"))

    async def show(self, client: AsyncWebClient, team: str, user: str) -> None:
        """Publish the home tab for `user`: editable for those who may edit."""
        configs = await read(self.store, self.store.channel_configs, team)
        view = home_view(configs, await self.may_edit(client, team, user))
        await client.views_publish(user_id=user, view=view)

    async def edit(
        self, client: AsyncWebClient, team: str, user: str, channel: str, trigger_id: str
    ) -> None:
        """Open the modal editing `channel` (the trigger is good for 3 s: asked first)."""
        if not await self.may_edit(client, team, user):
            return  # a forged or stale click: the tab they see has no such button
        config = (
            await read(self.store, self.store.channel_config, team, channel) if channel else None
        )
        view = edit_modal(channel, config, self.personas)
        await client.views_open(trigger_id=trigger_id, view=view)

    async def submit(
        self, client: AsyncWebClient, team: str, user: str, view: dict[str, Any]
    ) -> dict[str, str]:
        """Keep what the modal says; the errors to show in it (none: kept). Checked again
        here: a submission is a request anyone signed in could send."""
        state = (view.get("state") or {}).get("values") or {}
        first = next(iter(state), "persona")
        if not await self.may_edit(client, team, user):
            log.warning("%s of %s may not change channel settings: refused", user, team)
            return {first: READ_ONLY}
        config, errors = submitted(team, view.get("private_metadata") or "", state, user)
        if config is None:
            return errors
        if config.persona_name is not None and config.persona_name not in self.personas:
            return {"persona_name": f"No persona named {config.persona_name}."}
        if not config.is_default and config.editors:
            return {first: "Editors are named in the workspace default."}
        await asyncio.to_thread(self.store.set_channel_config, config)
        log.info("%s of %s changed the settings of %s", user, team, config.channel)
        return {}
