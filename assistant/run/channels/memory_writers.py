"""Who may write a channel's memory (the channel setting `memory`: off, members, editors):
asked when a run's tools are chosen, and again when a memory tool is carried out."""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.slack.connection import slack_reason
from context.channels import WORKSPACE_DEFAULT, MemoryWriters
from context.storage import Store
from context.storage.async_store import async_store

log = logging.getLogger(__name__)

_ADMIN_FLAGS = ("is_admin", "is_owner", "is_primary_owner")


async def may_write_memory(
    writers: MemoryWriters,
    user: str | None,
    team: str,
    client: AsyncWebClient | None,
    store: Store,
) -> bool:
    """Whether `user` may have the channel remember or forget: `members`, anyone the bot
    answers there; `editors`, the workspace's admins and owners (asked of Slack each time: a
    role may have changed) and the editors its default names. No one without Slack to ask."""
    if writers == "off" or user is None or client is None:
        return False
    if writers == "members":
        return True
    default = await async_store(store).read(store.channel_config, team, WORKSPACE_DEFAULT)
    if default is not None and user in default.editors:
        return True
    try:
        found = (await client.users_info(user=user))["user"]
    except SlackApiError as exc:
        log.warning("cannot tell whether %s is an admin: %s", user, slack_reason(exc))
        return False  # not known to be one: no more than a member
    return isinstance(found, dict) and any(found.get(flag) is True for flag in _ADMIN_FLAGS)
