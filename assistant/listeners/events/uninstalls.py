"""`app_uninstalled` and `tokens_revoked`: installed through OAuth, Bolt's own listeners delete
the workspace's installation (its bot token with it), and nothing is called for it afterwards
(assistant/slack/workspaces.py); its logs stay. With one SLACK_BOT_TOKEN there is nothing to
delete: the console says once that the token works no more."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

log = logging.getLogger(__name__)


def register(app: AsyncApp, oauth: bool) -> None:
    uninstalled = app.default_app_uninstalled_event_listener() if oauth else None
    revoked = app.default_tokens_revoked_event_listener() if oauth else None
    kept = "its installation deleted" if oauth else "SLACK_BOT_TOKEN works there no more"

    @app.event("app_uninstalled")
    async def handle_app_uninstalled(context: AsyncBoltContext) -> None:
        if uninstalled is not None:
            await uninstalled(context=context)
        log.warning("the app was uninstalled from workspace %s: %s", context.team_id, kept)

    @app.event("tokens_revoked")
    async def handle_tokens_revoked(event: dict[str, Any], context: AsyncBoltContext) -> None:
        if revoked is not None:
            await revoked(event=event, context=context)
        if (event.get("tokens") or {}).get("bot"):
            log.warning("workspace %s revoked the bot's token: %s", context.team_id, kept)
