"""Questions an MCP server asks a person during a call (MCP's elicitation,
docs/slack-features.md#questions-from-tools): asked by the run, answered from the form in any
process.

Revision ID: 0024_elicitations
Revises: 0023_eval_runs
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0024_elicitations"
down_revision = "0023_eval_runs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "elicitations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("team", sa.String, nullable=False),
        sa.Column("channel", sa.String, nullable=False),
        sa.Column("thread_ts", sa.String, nullable=False),
        sa.Column("asker", sa.String, nullable=False),
        sa.Column("question_json", sa.Text, nullable=False),
        sa.Column("asked_at", sa.String, nullable=False),
        sa.Column("action", sa.String, nullable=True),
        sa.Column("content_json", sa.Text, nullable=True),
        sa.Column("answered_by", sa.String, nullable=True),
        sa.Column("answered_at", sa.String, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("elicitations")
