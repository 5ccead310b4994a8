"""Real-time search: the `action_token` Slack gave with a person's message (EntryMeta.action_token),
so that the run answering it, in any process, searches Slack as that person.

Revision ID: 0015_action_tokens
Revises: 0014_model_refusals
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0015_action_tokens"
down_revision = "0014_model_refusals"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("entries", sa.Column("action_token", sa.String))


def downgrade() -> None:
    with op.batch_alter_table("entries") as batch:
        batch.drop_column("action_token")
