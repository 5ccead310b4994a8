"""Deferrals: a thread whose run a Slack fault that may pass stopped (an outage) keeps when
that began and when to try again, so that any process knows how long it has waited.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("threads", sa.Column("deferred_since", sa.String))
    op.add_column("threads", sa.Column("retry_at", sa.String))


def downgrade() -> None:
    with op.batch_alter_table("threads") as batch:
        batch.drop_column("retry_at")
        batch.drop_column("deferred_since")
