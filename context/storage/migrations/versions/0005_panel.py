"""The assistant panel: which threads were opened in Slack's assistant split view (who opened
them, the context Slack last sent, the title set), and each person's latest feedback vote on
each answer.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "panel_threads",
        sa.Column(
            "thread_id",
            sa.Integer,
            sa.ForeignKey("threads.id", name="fk_panel_threads_thread"),
            primary_key=True,
        ),
        sa.Column("user", sa.String, nullable=False),
        sa.Column("context_json", sa.Text, nullable=False),
        sa.Column("title", sa.Text),
    )
    op.create_table(
        "feedback_votes",
        sa.Column(
            "thread_id",
            sa.Integer,
            sa.ForeignKey("threads.id", name="fk_feedback_votes_thread"),
            nullable=False,
        ),
        sa.Column("answer_idx", sa.Integer, nullable=False),
        sa.Column("user", sa.String, nullable=False),
        sa.Column("vote", sa.String, nullable=False),
        sa.PrimaryKeyConstraint("thread_id", "answer_idx", "user", name="pk_feedback_votes"),
    )


def downgrade() -> None:
    op.drop_table("feedback_votes")
    op.drop_table("panel_threads")
