"""Standing approvals of MCP tools: "always allow for me / for everyone in this channel"
(docs/slack-features.md#grants), each bound to a workspace, channel, server and tool, and to a
person for the personal kind; revoked ones kept for the audit.

Revision ID: 0022_grants
Revises: 0021_mcp_connections
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0022_grants"
down_revision = "0021_mcp_connections"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "approval_grants",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("team", sa.String, nullable=False),
        sa.Column("channel", sa.String, nullable=False),
        sa.Column("server", sa.String, nullable=False),
        sa.Column("tool", sa.String, nullable=False),
        sa.Column("user", sa.String, nullable=True),
        sa.Column("granted_by", sa.String, nullable=False),
        sa.Column("granted_at", sa.String, nullable=False),
        sa.Column("thread_ts", sa.String, nullable=False),
        sa.Column("revoked_by", sa.String, nullable=True),
        sa.Column("revoked_at", sa.String, nullable=True),
    )
    op.create_index(
        "ix_approval_grants_tool", "approval_grants", ["team", "channel", "server", "tool"]
    )


def downgrade() -> None:
    op.drop_index("ix_approval_grants_tool", table_name="approval_grants")
    op.drop_table("approval_grants")
