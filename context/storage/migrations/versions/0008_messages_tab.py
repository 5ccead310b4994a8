"""The agent's Messages tab: when each person was last shown the suggested prompts, and what
each person is viewing in each DM with the app (and which change is in a log already).

Revision ID: 0008_messages_tab
Revises: 0007
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_messages_tab"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "prompts_shown",
        sa.Column("team", sa.String, nullable=False),
        sa.Column("user", sa.String, nullable=False),
        sa.Column("shown_at", sa.String, nullable=False),
        sa.PrimaryKeyConstraint("team", "user", name="pk_prompts_shown"),
    )
    op.create_table(
        "viewing",
        sa.Column("team", sa.String, nullable=False),
        sa.Column("channel", sa.String, nullable=False),
        sa.Column("user", sa.String, nullable=False),
        sa.Column("entities_json", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("recorded", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("team", "channel", "user", name="pk_viewing"),
    )


def downgrade() -> None:
    op.drop_table("viewing")
    op.drop_table("prompts_shown")
