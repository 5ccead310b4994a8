"""`app_uninstalled` and `tokens_revoked`: installed through OAuth, Bolt's own listeners delete
the workspace's installation (its bot token with it), and nothing is called for it afterwards
(assistant/slack/workspaces.py); its logs stay. With one SLACK_BOT_TOKEN there is nothing to
delete: the console says once that the token works no more."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Uninstalls:
    """Bolt's own listeners that delete a workspace's installation, where installs are kept."""

    uninstalled: Callable[..., Awaitable[object]] | None
    revoked: Callable[..., Awaitable[object]] | None
    kept: str  # what became of the workspace's token, for the log line

    @classmethod
    def of(cls, app: AsyncApp, oauth: bool) -> Uninstalls:
        if not oauth:
            return cls(None, None, "SLACK_BOT_TOKEN works there no more")
        return cls(
            app.default_app_uninstalled_event_listener(),
            app.default_tokens_revoked_event_listener(),
            "its installation deleted",
        )


async def handle_app_uninstalled(context: AsyncBoltContext, uninstalls: Uninstalls) -> None:
    if uninstalls.uninstalled is not None:
        await uninstalls.uninstalled(context=context)
    log.warning("the app was uninstalled from workspace %s: %s", context.team_id, uninstalls.kept)


async def handle_tokens_revoked(
    event: dict[str, Any], context: AsyncBoltContext, uninstalls: Uninstalls
) -> None:
    if uninstalls.revoked is not None:
        await uninstalls.revoked(event=event, context=context)
    if (event.get("tokens") or {}).get("bot"):
        log.warning("workspace %s revoked the bot's token: %s", context.team_id, uninstalls.kept)
