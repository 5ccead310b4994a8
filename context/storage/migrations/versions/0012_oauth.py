"""OAuth installs to many workspaces: the installations, bots and OAuth states of slack-sdk's
SQLAlchemy stores (assistant/slack/installs.py), with the columns and indexes those stores
define. Written out here, not built from slack-sdk, so that this migration stays what it was
when it ran (and `context` imports no Slack code); tests/context/test_store.py checks that the
migrated tables still equal the stores' own definitions.

Revision ID: 0012_oauth
Revises: 0011_stops
Create Date: 2026-11-25
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0012_oauth"
down_revision = "0011_stops"
branch_labels = None
depends_on = None

_ID, _NAME, _TOKEN, _SCOPES = sa.String(32), sa.String(200), sa.String(200), sa.String(1000)


def _bot_columns() -> list[sa.Column[Any]]:
    """The columns slack_installations and slack_bots share, in their order."""
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("client_id", _ID, nullable=False),
        sa.Column("app_id", _ID, nullable=False),
        sa.Column("enterprise_id", _ID),
        sa.Column("enterprise_name", _NAME),
    ]


def _bot() -> list[sa.Column[Any]]:
    return [
        sa.Column("team_id", _ID),
        sa.Column("team_name", _NAME),
        sa.Column("bot_token", _TOKEN),
        sa.Column("bot_id", _ID),
        sa.Column("bot_user_id", _ID),
        sa.Column("bot_scopes", _SCOPES),
        sa.Column("bot_refresh_token", _TOKEN),
        sa.Column("bot_token_expires_at", sa.DateTime),
    ]


def upgrade() -> None:
    op.create_table(
        "slack_installations",
        *_bot_columns(),
        sa.Column("enterprise_url", _NAME),
        *_bot(),
        sa.Column("user_id", _ID, nullable=False),
        sa.Column("user_token", _TOKEN),
        sa.Column("user_scopes", _SCOPES),
        sa.Column("user_refresh_token", _TOKEN),
        sa.Column("user_token_expires_at", sa.DateTime),
        sa.Column("incoming_webhook_url", _NAME),
        sa.Column("incoming_webhook_channel", _NAME),
        sa.Column("incoming_webhook_channel_id", _NAME),
        sa.Column("incoming_webhook_configuration_url", _NAME),
        sa.Column("is_enterprise_install", sa.Boolean, nullable=False),
        sa.Column("token_type", _ID),
        sa.Column("installed_at", sa.DateTime, nullable=False),
    )
    op.create_index(
        "slack_installations_idx",
        "slack_installations",
        ["client_id", "enterprise_id", "team_id", "user_id", "installed_at"],
    )
    op.create_table(
        "slack_bots",
        *_bot_columns(),
        *_bot(),
        sa.Column("is_enterprise_install", sa.Boolean, nullable=False),
        sa.Column("installed_at", sa.DateTime, nullable=False),
    )
    op.create_index(
        "slack_bots_idx", "slack_bots", ["client_id", "enterprise_id", "team_id", "installed_at"]
    )
    op.create_table(
        "slack_oauth_states",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("state", sa.String(200), nullable=False),
        sa.Column("expire_at", sa.DateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("slack_oauth_states")
    op.drop_index("slack_bots_idx", table_name="slack_bots")
    op.drop_table("slack_bots")
    op.drop_index("slack_installations_idx", table_name="slack_installations")
    op.drop_table("slack_installations")
