"""`auth.test`, and the token check every Web API method goes through, for `FakeSlack`."""

from __future__ import annotations

from typing import Any

from assistant.fakes import ids
from assistant.fakes.slack_params import Handler
from assistant.fakes.slack_store import SlackError


class AuthMethods:
    """Part of `FakeSlack`, which sets the attributes declared here."""

    bot_token: str | None
    app_token: str | None
    team_id: str
    bot_user_id: str
    bot_id: str

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
