"""Stops: the stop button of a thread's agent session pressed, kept on the thread's row so that
the process running the thread sees it, whichever process Slack told.

Revision ID: 0011_stops
Revises: 0010_channels
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0011_stops"
down_revision = "0010_channels"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("threads", sa.Column("stop_through", sa.Integer))
    op.add_column("threads", sa.Column("stop_user", sa.String))
    op.add_column("threads", sa.Column("stop_at", sa.String))
    op.add_column("threads", sa.Column("stop_streams", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("threads") as batch:
        batch.drop_column("stop_streams")
        batch.drop_column("stop_at")
        batch.drop_column("stop_user")
        batch.drop_column("stop_through")
