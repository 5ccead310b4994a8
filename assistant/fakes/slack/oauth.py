"""Many workspaces and OAuth installs, for `FakeSlack` (docs.slack.dev "Installing with OAuth",
"Token rotation", method `oauth.v2.access`).

A test declares the app (`oauth_app`: its client id and secret) and the workspaces
(`add_workspace`: a team, its channels, and whether the app is installed there already, with
which bot token). `authorize(team)` is a person approving the install on Slack's page: it
gives the code Slack would send to the redirect URL. `oauth.v2.access` exchanges a code for
the workspace's bot token (once), or, with `grant_type=refresh_token`, a refresh token for a
new token (installs with token rotation). `uninstall(team)` revokes its tokens.

Once a workspace is declared, every Web API call's token must be a workspace's live token,
and a call about a channel (or a `team_id`) of another workspace fails as Slack fails it:
`channel_not_found` (Slack does not say it exists elsewhere), `invalid_auth` for an unknown
token, `token_revoked` for a revoked one."""

from __future__ import annotations

import base64
import itertools
from dataclasses import dataclass, field
from typing import Any

from assistant.fakes import ids
from assistant.fakes.slack.conversations import Conversations
from assistant.fakes.slack.params import Handler
from assistant.fakes.slack.store import SlackError

EXPIRES_IN = 43_200  # seconds: Slack's rotating tokens last 12 hours
BOT_SCOPES = "app_mentions:read,chat:write"  # what the answer says; the fake grants anything


@dataclass
class Workspace:
    team_id: str
    name: str
    bot_user_id: str
    rotating: bool = False  # tokens expire, and come with refresh tokens
    expires_in: int = EXPIRES_IN  # seconds a new rotating token lasts
    tokens: list[str] = field(default_factory=list)  # live bot tokens, newest last

    @property
    def domain(self) -> str:
        return self.name.lower().replace(" ", "-")


class OAuthMethods:
    """Part of `FakeSlack`, which sets the attributes declared here."""

    app_id: str
    bot_user_id: str
    conversations: Conversations

    def _init_oauth(self) -> None:
        self.workspaces: dict[str, Workspace] = {}
        self._token_teams: dict[str, str] = {}  # live bot token -> its team
        self._revoked: set[str] = set()
        self._codes: dict[str, str] = {}  # unused code -> the team it installs to
        self._refresh_tokens: dict[str, str] = {}  # live refresh token -> its team
        self._clients: dict[str, str] = {}  # client id -> client secret
        self._serial = itertools.count(1)

    def _oauth_methods(self) -> dict[str, Handler]:
        return {"oauth.v2.access": self._oauth_v2_access}

    # -- declaring -----------------------------------------------------------------------------

    def oauth_app(self, client_id: str, client_secret: str) -> None:
        self._clients[client_id] = client_secret

    def add_workspace(
        self,
        team_id: str,
        *,
        name: str | None = None,
        bot_token: str | None = None,
        bot_user_id: str = ids.BOT_USER_ID,
        rotating: bool = False,
        channels: tuple[str, ...] = (),
    ) -> Workspace:
        """A workspace and its public channels (with `ids.USER_ID` in them); `bot_token`: the
        app is installed there already, with that token."""
        workspace = Workspace(team_id, name or f"Team {team_id}", bot_user_id, rotating)
        self.workspaces[team_id] = workspace
        for channel in channels:
            self.conversations.public(channel, [ids.USER_ID], team=team_id)
        if bot_token is not None:
            self._grant(workspace, bot_token)
        return workspace

    def authorize(self, team_id: str) -> str:
        """A person approved the install to `team_id` on Slack's page: the code for the
        redirect."""
        code = f"code-{team_id}-{next(self._serial)}"
        self._codes[code] = team_id
        return code

    def uninstall(self, team_id: str) -> None:
        """The app uninstalled from `team_id`: its tokens are revoked."""
        workspace = self.workspaces[team_id]
        for token in workspace.tokens:
            self._token_teams.pop(token, None)
            self._revoked.add(token)
        workspace.tokens.clear()

    def refuse_refresh(self, team_id: str) -> None:
        """`team_id`'s refresh tokens are refused from now on (`invalid_refresh_token`)."""
        for refresh, team in list(self._refresh_tokens.items()):
            if team == team_id:
                del self._refresh_tokens[refresh]

    # -- the check every call goes through -----------------------------------------------------

    def _check_workspace(self, method: str, token: str, params: dict[str, Any]) -> None:
        """With workspaces declared: the token is one of theirs, and the call is about that
        workspace only."""
        if not self.workspaces or method == "apps.connections.open":
            return
        if token in self._revoked:
            raise SlackError("token_revoked")
        team = self._token_teams.get(token)
        if team is None:
            raise SlackError("invalid_auth")
        if params.get("team_id") and params["team_id"] != team:
            raise SlackError("team_access_not_granted")
        for name in ("channel", "channel_id"):
            owner = self.conversations.team_of(str(params.get(name) or ""))
            if owner is not None and owner != team:
                raise SlackError("channel_not_found")

    def _team_of_token(self, token: str | None) -> Workspace | None:
        team = self._token_teams.get(token or "")
        return self.workspaces.get(team) if team else None

    # -- oauth.v2.access -----------------------------------------------------------------------

    def _oauth_v2_access(self, params: dict[str, Any]) -> dict[str, Any]:
        client_id, secret = params.get("client_id"), params.get("client_secret")
        if client_id not in self._clients:
            raise SlackError("invalid_client_id")
        if secret != self._clients[client_id]:
            raise SlackError("bad_client_secret")
        if params.get("grant_type") == "refresh_token":
            team = self._refresh_tokens.pop(str(params.get("refresh_token") or ""), None)
            if team is None or team not in self.workspaces:
                raise SlackError("invalid_refresh_token")
            return self._token_answer(self.workspaces[team])
        team = self._codes.pop(str(params.get("code") or ""), None)
        if team is None:
            raise SlackError("invalid_code")
        return self._token_answer(self.workspaces[team])

    def _token_answer(self, workspace: Workspace) -> dict[str, Any]:
        token = f"xoxb-{workspace.team_id}-{next(self._serial)}"
        self._grant(workspace, token)
        answer: dict[str, Any] = {
            "ok": True,
            "access_token": token,
            "token_type": "bot",
            "scope": BOT_SCOPES,
            "bot_user_id": workspace.bot_user_id,
            "app_id": self.app_id,
            "team": {"id": workspace.team_id, "name": workspace.name},
            "enterprise": None,
            "authed_user": {"id": ids.USER_ID},
            "is_enterprise_install": False,
        }
        if workspace.rotating:
            refresh = f"xoxe-1-{workspace.team_id}-{next(self._serial)}"
            self._refresh_tokens[refresh] = workspace.team_id
            answer |= {"refresh_token": refresh, "expires_in": workspace.expires_in}
        return answer

    def _grant(self, workspace: Workspace, token: str) -> None:
        workspace.tokens.append(token)
        self._token_teams[token] = workspace.team_id


def basic_credentials(header: str | None) -> dict[str, str]:
    """`client_id` and `client_secret` from HTTP Basic auth, as slack-sdk sends them to
    `oauth.v2.access` (Slack takes them as form fields too)."""
    if not header or not header.startswith("Basic "):
        return {}
    try:
        decoded = base64.b64decode(header.removeprefix("Basic ").strip()).decode()
    except ValueError:
        return {}
    client_id, _, secret = decoded.partition(":")
    return {"client_id": client_id, "client_secret": secret}
