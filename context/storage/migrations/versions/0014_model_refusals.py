"""What the model service refused in each channel (a model it does not serve, or this key may
not use), for `assistant channels list`.

Revision ID: 0014_model_refusals
Revises: 0013_trace_context
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0014_model_refusals"
down_revision = "0013_trace_context"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "model_refusals",
        sa.Column("team", sa.String, nullable=False),
        sa.Column("channel", sa.String, nullable=False),
        sa.Column("model", sa.String, nullable=False),
        sa.Column("what", sa.String, nullable=False),
        sa.Column("at", sa.String, nullable=False),
        sa.PrimaryKeyConstraint("team", "channel", name="pk_model_refusals"),
    )


def downgrade() -> None:
    op.drop_table("model_refusals")
