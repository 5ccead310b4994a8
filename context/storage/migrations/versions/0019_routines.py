"""Routines: a prompt answered in a channel on a schedule (cron and zone, or one time), the
next time it is due indexed for the tick that finds the due ones.

Revision ID: 0019_routines
Revises: 0018_memory
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0019_routines"
down_revision = "0018_memory"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "routines",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team", sa.String, nullable=False),
        sa.Column("channel", sa.String, nullable=False),
        sa.Column("prompt", sa.Text, nullable=False),
        sa.Column("creator", sa.String),
        sa.Column("cron", sa.String),
        sa.Column("tz", sa.String),
        sa.Column("at", sa.String),
        sa.Column("next_due", sa.String),
        sa.Column("paused", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("paused_reason", sa.Text),
        sa.Column("last_run_at", sa.String),
        sa.Column("last_thread_ts", sa.String),
        sa.Column("last_outcome", sa.String),
        sa.Column("failures", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.String, nullable=False),
    )
    op.create_index("ix_routines_next_due", "routines", ["next_due"])


def downgrade() -> None:
    op.drop_index("ix_routines_next_due", table_name="routines")
    op.drop_table("routines")
