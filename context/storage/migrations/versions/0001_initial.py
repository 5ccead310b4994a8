"""Threads and their entries.

Revision ID: 0001
Revises:
Create Date: 2025-04-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "threads",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team", sa.String, nullable=False),
        sa.Column("channel", sa.String, nullable=False),
        sa.Column("thread_ts", sa.String, nullable=False),
        sa.Column("created_at", sa.String, nullable=False),
        sa.Column("updated_at", sa.String, nullable=False),
        sa.Column("next_index", sa.Integer, nullable=False, server_default="0"),
        sa.Column("turn", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_speaker", sa.String),
        sa.UniqueConstraint("team", "channel", "thread_ts", name="uq_threads_key"),
    )
    op.create_table(
        "entries",
        sa.Column(
            "thread_id",
            sa.Integer,
            sa.ForeignKey("threads.id", name="fk_entries_thread"),
            nullable=False,
        ),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("role", sa.String, nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("timestamp", sa.String, nullable=False),
        sa.Column("content_json", sa.Text, nullable=False),
        sa.Column("slack_ts", sa.String),
        sa.Column("event_id", sa.String),
        sa.Column("model", sa.String),
        sa.Column("prompt_tokens", sa.Integer),
        sa.Column("cached_tokens", sa.Integer),
        sa.Column("completion_tokens", sa.Integer),
        sa.Column("latency_ms", sa.Float),
        sa.Column("recorded_at", sa.String, nullable=False),
        sa.PrimaryKeyConstraint("thread_id", "idx", name="pk_entries"),
    )
    has_event = sa.text("event_id IS NOT NULL")
    op.create_index(
        "ux_entries_thread_event",
        "entries",
        ["thread_id", "event_id"],
        unique=True,
        postgresql_where=has_event,
        sqlite_where=has_event,
    )


def downgrade() -> None:
    op.drop_table("entries")
    op.drop_table("threads")
