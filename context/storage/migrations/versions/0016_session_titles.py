"""The title a person gave a thread's agent session in Slack (`agent_session_title_changed`),
which the app never renames over.

Revision ID: 0016_session_titles
Revises: 0015_action_tokens
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0016_session_titles"
down_revision = "0015_action_tokens"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "session_titles",
        sa.Column(
            "thread_id",
            sa.Integer,
            sa.ForeignKey("threads.id", name="fk_session_titles_thread"),
            primary_key=True,
        ),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("user", sa.String, nullable=False),
        sa.Column("changed_at", sa.String, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("session_titles")
