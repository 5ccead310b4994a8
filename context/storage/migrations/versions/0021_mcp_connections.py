"""Per-person sign-in to MCP servers (docs/configuration.md#signing-in-to-mcp-servers): each
person's tokens per workspace and server, the sign-ins under way (their state's hash, single
use), and the client registered with each server's authorization server. Every secret is
sealed with ASSISTANT_SECRET_KEY before it is written.

Revision ID: 0021_mcp_connections
Revises: 0020_budgets
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0021_mcp_connections"
down_revision = "0020_budgets"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mcp_connections",
        sa.Column("team", sa.String, nullable=False),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("server", sa.String, nullable=False),
        sa.Column("sealed", sa.Text, nullable=False),
        sa.Column("expires_at", sa.String),
        sa.Column("scope", sa.String),
        sa.Column("connected_at", sa.String, nullable=False),
        sa.PrimaryKeyConstraint("team", "user_id", "server", name="pk_mcp_connections"),
    )
    op.create_table(
        "mcp_sign_ins",
        sa.Column("state_hash", sa.String, primary_key=True),
        sa.Column("team", sa.String, nullable=False),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("server", sa.String, nullable=False),
        sa.Column("channel", sa.String, nullable=False),
        sa.Column("thread_ts", sa.String, nullable=False),
        sa.Column("entry_idx", sa.Integer, nullable=False),
        sa.Column("sealed", sa.Text, nullable=False),
        sa.Column("expires_at", sa.String, nullable=False),
    )
    op.create_table(
        "mcp_clients",
        sa.Column("server", sa.String, nullable=False),
        sa.Column("issuer", sa.String, nullable=False),
        sa.Column("sealed", sa.Text, nullable=False),
        sa.Column("registered_at", sa.String, nullable=False),
        sa.PrimaryKeyConstraint("server", "issuer", name="pk_mcp_clients"),
    )


def downgrade() -> None:
    op.drop_table("mcp_clients")
    op.drop_table("mcp_sign_ins")
    op.drop_table("mcp_connections")
