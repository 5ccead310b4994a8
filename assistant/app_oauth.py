"""The Bolt app, and where each workspace's token comes from: one SLACK_BOT_TOKEN, or OAuth
installs to many workspaces (docs/slack-setup.md, "Distributing the app")."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TypedDict

import yaml
from slack_bolt.async_app import AsyncApp
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator

from assistant.settings.environment import Settings
from assistant.slack.bot_identity import BotIdentity
from assistant.slack.client import configure_slack_client
from assistant.slack.installation_authorize import InstallationAuthorize
from assistant.slack.installs import Installations, OAuthStates
from assistant.slack.workspaces import Workspaces
from context.storage import Store

log = logging.getLogger(__name__)

# The app's manifest is package data (the repository's manifest.yml links to it), so an
# installed wheel asks for the same scopes as a checkout.
MANIFEST = Path(__file__).parent / "manifest.yml"
# Bolt's default: a token that expires within this is refreshed before it is used.
ROTATE_MINUTES = 120


class _AppOptions(TypedDict):
    """What every Bolt app of ours is built with, OAuth or one token."""

    signing_secret: str
    process_before_response: bool


def bot_scopes(manifest: Path = MANIFEST) -> list[str]:
    """The bot scopes an install asks for: exactly the manifest's."""
    data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    return list(data["oauth_config"]["scopes"]["bot"])


def create_bolt_app(
    settings: Settings, store: Store, identity: BotIdentity | None
) -> tuple[AsyncApp, Workspaces, BotIdentity | None]:
    """The app, each workspace's client, and (one token) the bot's identity."""
    signing_secret = (
        settings.slack.signing_secret.get_secret_value()
        if settings.slack.signing_secret
        else ""  # Socket Mode: Slack signs nothing, the websocket is authenticated
    )
    # Acknowledge an event only once it is recorded (the run itself starts after): a process
    # killed before that leaves Slack to retry it, so no message is lost.
    common: _AppOptions = {"signing_secret": signing_secret, "process_before_response": True}
    if settings.slack.oauth and settings.slack.bot_token is None:  # (`run` keeps the one token)
        return _oauth_app(settings, store, common)
    assert settings.slack.bot_token is not None
    token = settings.slack.bot_token.get_secret_value()
    identity = identity or BotIdentity(token)
    # Bolt is given the token, not a client: given a client, it still reads SLACK_BOT_TOKEN
    # from the environment (whenever no token is passed) and then warns that the token it
    # found is unused. The client it builds from the token is then configured as ours.
    # The bot's identity is learned once, never asked for inside a request: an event is
    # recorded and acknowledged whatever Slack's Web API does (assistant/slack/bot_identity.py).
    app = AsyncApp(token=token, authorize=identity, **common)
    client = configure_slack_client(app.client, settings.slack.api_base)
    identity.client = client
    return app, Workspaces(settings.slack.api_base, single=client), identity


def _oauth_app(
    settings: Settings, store: Store, common: _AppOptions
) -> tuple[AsyncApp, Workspaces, None]:
    assert settings.slack.client_id and settings.slack.client_secret
    client_id = settings.slack.client_id
    secret = settings.slack.client_secret.get_secret_value()
    installations = Installations(store, client_id)
    oauth = AsyncOAuthSettings(
        client_id=client_id,
        client_secret=secret,
        scopes=bot_scopes(),
        user_scopes=[],
        installation_store=installations,
        installation_store_bot_only=True,
        state_store=OAuthStates(store),
        token_rotation_expiration_minutes=ROTATE_MINUTES,
    )
    # Each request is authorized from the workspace's installation as stored, asking Slack
    # nothing (Bolt's own asks `auth.test` every time, and loses the event when that fails);
    # an expiring token is refreshed by `Workspaces`, the one place that refreshes.
    authorize = InstallationAuthorize()
    app = AsyncApp(
        oauth_settings=oauth,
        installation_store=installations,
        installation_store_bot_only=True,
        # Bolt takes an AsyncAuthorize as it is, beside the OAuth settings (its annotation
        # names only a plain function, which it would refuse here).
        authorize=authorize,  # type: ignore[arg-type]
        **common,
    )
    client = configure_slack_client(app.client, settings.slack.api_base)
    # app_uninstalled and tokens_revoked: Bolt's own listeners delete the installation.
    app.enable_token_revocation_listeners()
    rotator = AsyncTokenRotator(client_id=client_id, client_secret=secret, client=client)
    workspaces = Workspaces(
        settings.slack.api_base,
        installations=installations,
        rotator=rotator,
        rotate_minutes=ROTATE_MINUTES,
    )
    authorize.workspaces = workspaces
    return app, workspaces, None
