"""Images over SQL (`ImageStore`): the Slack files user entries refer to, read back newest
first for a prompt. They are written with their entries, by `SqlLog`."""

from __future__ import annotations

from dataclasses import fields

from sqlalchemy import bindparam, select

from context.storage.engine import Repository
from context.storage.tables import THREAD, entry_images_table, thread_values, threads_table
from context.storage.values import ImageRef, ThreadKey

_IMAGE_COLUMNS = [entry_images_table.c[f.name] for f in fields(ImageRef)]
# Read at every step of a run: built once (see `THREAD`).
_RECENT = (
    select(entry_images_table.c.idx, *_IMAGE_COLUMNS)
    .join(threads_table)
    .where(THREAD)
    .order_by(entry_images_table.c.idx.desc(), entry_images_table.c.position.desc())
    .limit(bindparam("limit"))
)


class SqlImages(Repository):
    """`ImageStore` over SQL."""

    def recent_images(self, key: ThreadKey, limit: int) -> list[tuple[int, ImageRef]]:
        with self._db.read() as connection:
            rows = connection.execute(_RECENT, {**thread_values(key), "limit": limit}).all()
        return [(row.idx, ImageRef(*row[1:])) for row in reversed(rows)]
