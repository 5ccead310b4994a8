"""Streams: the Slack messages a thread's run is streaming and has not finished, so that a
run resumed after a crash finishes, replaces or deletes them.

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
    op.add_column("threads", sa.Column("open_streams", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("threads") as batch:
        batch.drop_column("open_streams")
