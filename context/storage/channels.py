"""Channel settings over SQL (`ChannelStore`): one row per channel, and per workspace's
default, holding a `ChannelConfig` as JSON."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Insert, bindparam, select
from sqlalchemy.dialects import postgresql, sqlite

from context.channels import WORKSPACE_DEFAULT, ChannelConfig
from context.storage.engine import Repository
from context.storage.tables import channel_settings_table, now

_table = channel_settings_table
# Built once: a statement built per call costs more CPU than SQLite's answer to it.
_IN_FORCE = select(_table.c.channel, _table.c.config_json).where(
    _table.c.team == bindparam("team"),
    _table.c.channel.in_((bindparam("channel"), bindparam("default"))),
)


def _upsert(statement: postgresql.Insert | sqlite.Insert) -> Insert:
    # One statement: two saves of one channel at once both land (the later one kept), where
    # a delete then an insert lost the race to a unique violation on PostgreSQL.
    return statement.on_conflict_do_update(
        index_elements=["team", "channel"],
        set_={
            "config_json": statement.excluded.config_json,
            "updated_at": statement.excluded.updated_at,
        },
    )


_UPSERT_POSTGRESQL = _upsert(postgresql.insert(_table))
_UPSERT_SQLITE = _upsert(sqlite.insert(_table))


class SqlChannels(Repository):
    """`ChannelStore` over SQL."""

    def channel_config(self, team: str, channel: str) -> ChannelConfig | None:
        query = select(_table.c.config_json).where(
            _table.c.team == team, _table.c.channel == channel
        )
        with self._db.read() as connection:
            text = connection.scalar(query)
        return None if text is None else ChannelConfig.model_validate_json(text)

    def channel_configs_in_force(
        self, team: str, channel: str
    ) -> tuple[ChannelConfig | None, ChannelConfig | None]:
        params = {"team": team, "channel": channel, "default": WORKSPACE_DEFAULT}
        with self._db.read() as connection:
            kept = dict(connection.execute(_IN_FORCE, params).all())
        default, own = kept.get(WORKSPACE_DEFAULT), kept.get(channel)
        return (
            None if default is None else ChannelConfig.model_validate_json(default),
            None if own is None else ChannelConfig.model_validate_json(own),
        )

    def channel_configs(self, team: str | None = None) -> list[ChannelConfig]:
        query = select(_table.c.config_json).order_by(_table.c.team, _table.c.channel)
        if team is not None:
            query = query.where(_table.c.team == team)
        with self._db.read() as connection:
            return [ChannelConfig.model_validate_json(t) for t in connection.scalars(query)]

    def set_channel_config(self, config: ChannelConfig) -> ChannelConfig:
        return self.set_channel_configs([config])[0]

    def set_channel_configs(self, configs: Sequence[ChannelConfig]) -> list[ChannelConfig]:
        at = now()
        kept = [config.model_copy(update={"updated_at": at}) for config in configs]
        with self._db.transaction() as connection:
            # Each replaced whole, all in one transaction: a reader sees the old settings or
            # the new, and a failure part-way keeps none of them.
            upsert = (
                _UPSERT_POSTGRESQL if connection.dialect.name == "postgresql" else _UPSERT_SQLITE
            )
            rows = [
                {
                    "team": config.team,
                    "channel": config.channel,
                    "config_json": config.model_dump_json(exclude_defaults=True),
                    "updated_at": at,
                }
                for config in kept
            ]
            connection.execute(upsert, rows)
        return kept
