"""Streams: the Slack messages a thread's run is streaming and has not finished, so that a
run resumed after a crash finishes, replaces or deletes them.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("threads", sa.Column("open_streams", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("threads") as batch:
        batch.drop_column("open_streams")
