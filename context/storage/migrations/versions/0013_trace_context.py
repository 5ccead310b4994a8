"""Telemetry: the W3C trace context of the span that recorded an entry (EntryMeta.trace_context),
so that a run, or a feedback click, handled by another process links to it.

Revision ID: 0013_trace_context
Revises: 0012_oauth
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_trace_context"
down_revision = "0012_oauth"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("entries", sa.Column("trace_context", sa.String))


def downgrade() -> None:
    with op.batch_alter_table("entries") as batch:
        batch.drop_column("trace_context")
