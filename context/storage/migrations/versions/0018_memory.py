"""Channel memory (docs/log-format.md#channel-memory): the memories in force per channel, DM
and workspace, and the audit of every change. Who may write is a channel setting (`memory`,
in channel_settings' JSON: no column).

Revision ID: 0018_memory
Revises: 0017_addressed
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0018_memory"
down_revision = "0017_addressed"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "memories",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team", sa.String, nullable=False),
        sa.Column("scope", sa.String, nullable=False),
        sa.Column("channel", sa.String, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("author", sa.String, nullable=False),
        sa.Column("created_at", sa.String, nullable=False),
        sa.Column("source", sa.String, nullable=False),
    )
    op.create_index("ix_memories_channel", "memories", ["team", "channel"])
    op.create_table(
        "memory_audit",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team", sa.String, nullable=False),
        sa.Column("channel", sa.String, nullable=False),
        sa.Column("memory_id", sa.Integer, nullable=False),
        sa.Column("action", sa.String, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("actor", sa.String, nullable=False),
        sa.Column("via", sa.String, nullable=False),
        sa.Column("at", sa.String, nullable=False),
    )
    op.create_index("ix_memory_audit_channel", "memory_audit", ["team", "channel"])


def downgrade() -> None:
    op.drop_index("ix_memory_audit_channel", "memory_audit")
    op.drop_table("memory_audit")
    op.drop_index("ix_memories_channel", "memories")
    op.drop_table("memories")
