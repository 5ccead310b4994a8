"""A run that would end without answering a person who asked the bot itself apologizes
instead: whether a user entry asked it (a mention, a DM, the shortcut) or is a follow-up owed
an answer without a mention (EntryMeta.addressed). Entries before this: not known, so not
addressed (a silent end, as before).

Revision ID: 0017_addressed
Revises: 0016_session_titles
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0017_addressed"
down_revision = "0016_session_titles"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "entries", sa.Column("addressed", sa.Boolean, nullable=False, server_default=sa.false())
    )


def downgrade() -> None:
    with op.batch_alter_table("entries") as batch:
        batch.drop_column("addressed")
