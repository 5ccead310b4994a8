"""Spend limits: what each channel's model calls spent and hold per UTC day and month, in
micro-dollars or tokens (the limits themselves are channel settings, kept as JSON).

Revision ID: 0020_budgets
Revises: 0019_routines
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0020_budgets"
down_revision = "0019_routines"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "spend",
        sa.Column("team", sa.String, nullable=False),
        sa.Column("channel", sa.String, nullable=False),
        sa.Column("period", sa.String, nullable=False),
        sa.Column("unit", sa.String, nullable=False),
        sa.Column("spent", sa.BigInteger, nullable=False),
        sa.Column("reserved", sa.BigInteger, nullable=False),
        sa.Column("warned", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.PrimaryKeyConstraint("team", "channel", "period", "unit", name="pk_spend"),
    )


def downgrade() -> None:
    op.drop_table("spend")
