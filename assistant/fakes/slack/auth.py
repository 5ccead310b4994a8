"""`auth.test`, and the token check every Web API method goes through, for `FakeSlack`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assistant.fakes import ids
from assistant.fakes.slack.params import Handler
from assistant.fakes.slack.store import SlackError


class AuthMethods:
    """Part of `FakeSlack`, which sets the attributes declared here."""

    bot_token: str | None
    app_token: str | None
    team_id: str
    bot_user_id: str
    bot_id: str
    calling_token: str | None  # the token of the call being answered

    _team_of_token: Callable[[str | None], Any]  # slack_oauth's

    def _auth_methods(self) -> dict[str, Handler]:
        return {"auth.test": self._auth_test}

    def _check_token(self, method: str, token: str | None) -> None:
        if not token:
            raise SlackError("not_authed")
        app_level = method == "apps.connections.open"
        if token.startswith("xapp-") != app_level:
            raise SlackError("not_allowed_token_type")
        expected = self.app_token if app_level else self.bot_token
        if expected is not None and token != expected:
            raise SlackError("invalid_auth")
        if expected is None and not token.startswith(("xapp-", "xoxb-", "xoxp-")):
            raise SlackError("invalid_auth")

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        # Declared workspaces (slack_oauth): the token's own.
        workspace = self._team_of_token(self.calling_token)
        if workspace is not None:
            return {
                "ok": True,
                "url": f"https://{workspace.domain}.slack.com/",
                "team": workspace.name,
                "user": ids.BOT_USER_NAME,
                "team_id": workspace.team_id,
                "user_id": workspace.bot_user_id,
                "bot_id": self.bot_id,
                "is_enterprise_install": False,
            }
        return {
            "ok": True,
            "url": f"https://{ids.TEAM_DOMAIN}.slack.com/",
            "team": ids.TEAM_NAME,
            "user": ids.BOT_USER_NAME,
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }
