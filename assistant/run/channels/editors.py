"""Who edits a workspace's channel settings (docs/configuration.md, "Configuring channels"):
its admins and owners (asked of Slack each time: a role may have changed since) and the people
they name in the workspace default's `editors`. The App Home's edit rights and the grants for
everyone in a channel (docs/slack-features.md#grants) both read it here."""

from __future__ import annotations

import logging
from typing import Literal

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.slack.connection import slack_reason
from context.channels import WORKSPACE_DEFAULT
from context.storage import Store
from context.storage.async_store import async_store

log = logging.getLogger(__name__)

Role = Literal["admin", "editor"]


async def workspace_role(client: AsyncWebClient, store: Store, team: str, user: str) -> Role | None:
    """The person's role: an admin or owner of the workspace, one of the editors the admins
    named, or None (also when Slack cannot say whether they are an admin: less, never more)."""
    try:
        found = (await client.users_info(user=user))["user"]
    except SlackApiError as exc:
        log.warning("cannot tell whether %s is an admin: %s", user, slack_reason(exc))
        found = {}
    if isinstance(found, dict) and any(
        found.get(flag) is True for flag in ("is_admin", "is_owner", "is_primary_owner")
    ):
        return "admin"
    default = await async_store(store).read(store.channel_config, team, WORKSPACE_DEFAULT)
    return "editor" if default is not None and user in default.editors else None
