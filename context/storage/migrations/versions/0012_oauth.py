"""OAuth installs to many workspaces: slack-sdk's installations, bots and OAuth states, its
tables exactly as its SQLAlchemy stores define them (built from the stores' own definitions,
so they cannot drift from what the stores read and write).

Revision ID: 0012_oauth
Revises: 0011_stops
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore

revision = "0012_oauth"
down_revision = "0011_stops"
branch_labels = None
depends_on = None


def _tables(metadata: sa.MetaData) -> list[sa.Table]:
    installs, states = SQLAlchemyInstallationStore, SQLAlchemyOAuthStateStore
    return [
        installs.build_installations_table(metadata, installs.default_installations_table_name),
        installs.build_bots_table(metadata, installs.default_bots_table_name),
        states.build_oauth_states_table(metadata, states.default_table_name),
    ]


def upgrade() -> None:
    metadata = sa.MetaData()
    metadata.create_all(op.get_bind(), tables=_tables(metadata))


def downgrade() -> None:
    metadata = sa.MetaData()
    metadata.drop_all(op.get_bind(), tables=_tables(metadata))
