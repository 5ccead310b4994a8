"""Channel settings: a persona, a model, whether the bot answers and who may use it, per
channel of a workspace and as the workspace's default (`context.channels`).

Revision ID: 0010_channels
Revises: 0007
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0010_channels"
down_revision = "0009_usage"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "channel_settings",
        sa.Column("team", sa.String, nullable=False),
        sa.Column("channel", sa.String, nullable=False),
        sa.Column("config_json", sa.Text, nullable=False),
        sa.Column("updated_at", sa.String, nullable=False),
        sa.PrimaryKeyConstraint("team", "channel", name="pk_channel_settings"),
    )


def downgrade() -> None:
    op.drop_table("channel_settings")
