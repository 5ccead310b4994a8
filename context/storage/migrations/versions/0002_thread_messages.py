"""Copies of each thread's Slack messages, for getThreadHistory without asking Slack again.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN, not batch mode: SQLite adds a column with a constant default in
    # place, where batch mode would copy the table under the entries' foreign key.
    op.add_column(
        "threads",
        sa.Column("history_complete", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    op.create_table(
        "thread_messages",
        sa.Column(
            "thread_id",
            sa.Integer,
            sa.ForeignKey("threads.id", name="fk_thread_messages_thread"),
            nullable=False,
        ),
        sa.Column("ts", sa.String, nullable=False),
        sa.Column("user", sa.String, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("thread_id", "ts", name="pk_thread_messages"),
    )


def downgrade() -> None:
    op.drop_table("thread_messages")
    op.drop_column("threads", "history_complete")
