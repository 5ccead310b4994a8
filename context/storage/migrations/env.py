"""Alembic environment: runs on the connection `context.storage.engine.migrate` hands over.

That connection is already in a transaction (holding the migration lock), so Alembic runs
every migration inside it and commits nothing itself.
"""

from alembic import context as alembic_context

from context.storage.tables import metadata

connection = alembic_context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError(
        "run migrations with context.storage.engine.migrate(engine) or with "
        "context.storage.engine.migration_config(connection); there is no alembic.ini"
    )

alembic_context.configure(
    connection=connection,
    target_metadata=metadata,
    # SQLite alters a table by copying it; later migrations need batch mode there.
    render_as_batch=connection.dialect.name == "sqlite",
)
with alembic_context.begin_transaction():
    alembic_context.run_migrations()
