"""Usage by person and answers: each entry keeps the Slack user it is by (a person's message)
or for (the rest: the author of the thread's newest message when it was recorded), and
whether it ended a run, so that `assistant usage` can group model calls by person and count
answers in SQL. Filled for entries recorded from now on; older entries keep NULL and false.

Revision ID: 0009_usage
Revises: 0007
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_usage"
down_revision = "0008_messages_tab"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("entries", sa.Column("person", sa.String))
    op.add_column(
        "entries", sa.Column("ends_run", sa.Boolean, nullable=False, server_default=sa.false())
    )


def downgrade() -> None:
    with op.batch_alter_table("entries") as batch:
        batch.drop_column("ends_run")
        batch.drop_column("person")
