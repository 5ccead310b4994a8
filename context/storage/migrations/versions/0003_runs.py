"""Durable runs: which user entries want an answer, how far each thread is answered, and a
lease so that one process at a time runs a thread.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "threads",
        sa.Column("answered_through", sa.Integer, nullable=False, server_default="-1"),
    )
    # Threads from before this revision were answered as far as anyone knows: not resumed.
    op.execute("UPDATE threads SET answered_through = next_index - 1")
    op.add_column("threads", sa.Column("run_holder", sa.String))
    op.add_column("threads", sa.Column("run_expires", sa.String))
    op.add_column(
        "entries",
        sa.Column("wants_answer", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    wants = sa.text("wants_answer")
    op.create_index(
        "ix_entries_wants_answer",
        "entries",
        ["thread_id", "idx"],
        postgresql_where=wants,
        sqlite_where=wants,
    )
    # The duplicate check of every user message's append, and the lookups of edits and posts.
    has_ts = sa.text("slack_ts IS NOT NULL")
    op.create_index(
        "ix_entries_thread_slack_ts",
        "entries",
        ["thread_id", "slack_ts"],
        postgresql_where=has_ts,
        sqlite_where=has_ts,
    )


def downgrade() -> None:
    op.drop_index("ix_entries_thread_slack_ts", "entries")
    op.drop_index("ix_entries_wants_answer", "entries")
    op.drop_column("entries", "wants_answer")
    op.drop_column("threads", "run_expires")
    op.drop_column("threads", "run_holder")
    op.drop_column("threads", "answered_through")
