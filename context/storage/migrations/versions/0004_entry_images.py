"""Images attached to user entries (their Slack files), so that a prompt can carry the recent
ones as image parts; the entry's text holds only a marker.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "entry_images",
        sa.Column(
            "thread_id",
            sa.Integer,
            sa.ForeignKey("threads.id", name="fk_entry_images_thread"),
            nullable=False,
        ),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("file_id", sa.String, nullable=False),
        sa.Column("name", sa.String, nullable=False),
        sa.Column("mimetype", sa.String, nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("thread_id", "idx", "position", name="pk_entry_images"),
    )


def downgrade() -> None:
    op.drop_table("entry_images")
