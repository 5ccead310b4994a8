"""Channel settings over SQL (`ChannelStore`): one row per channel, and per workspace's
default, holding a `ChannelConfig` as JSON."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import bindparam, delete, insert, select

from context.channels import WORKSPACE_DEFAULT, ChannelConfig
from context.storage.engine import Repository
from context.storage.tables import channel_settings_table, now

_table = channel_settings_table
# Built once: a statement built per call costs more CPU than SQLite's answer to it.
_IN_FORCE = select(_table.c.channel, _table.c.config_json).where(
    _table.c.team == bindparam("team"),
    _table.c.channel.in_((bindparam("channel"), bindparam("default"))),
)


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
            # Replaced whole, in one transaction: a reader sees the old settings or the new,
            # and a failure part-way keeps none of them.
            for config in kept:
                where = (_table.c.team == config.team) & (_table.c.channel == config.channel)
                connection.execute(delete(_table).where(where))
                connection.execute(
                    insert(_table).values(
                        team=config.team,
                        channel=config.channel,
                        config_json=config.model_dump_json(exclude_defaults=True),
                        updated_at=at,
                    )
                )
        return kept
