"""People's sign-ins to MCP servers over SQL (`McpConnectionStore`): their tokens, the
sign-ins under way and the clients registered with the servers' authorization servers.
Nothing here is decrypted: the columns named `sealed` come and go as ciphertext
(`assistant.mcp.signin.sealing` seals and opens them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, Row, delete, select

from context.storage.engine import Repository
from context.storage.tables import (
    mcp_clients_table,
    mcp_connections_table,
    mcp_sign_ins_table,
)
from context.storage.values import ThreadKey


@dataclass(frozen=True)
class SignInRow:
    """A sign-in under way: bound to the workspace, person, server, thread and the call's
    entry; `sealed` holds its PKCE verifier."""

    team: str
    user: str
    server: str
    key: ThreadKey
    index: int
    sealed: str = field(repr=False)
    expires_at: str


@dataclass(frozen=True)
class ConnectionRow:
    team: str
    user: str
    server: str
    sealed: str = field(repr=False)  # the ciphertext is no one's business either
    expires_at: str | None
    scope: str | None
    connected_at: str


class SqlMcpConnections(Repository):
    """`McpConnectionStore` over SQL."""

    def save_sign_in(self, state_hash: str, sign_in: SignInRow) -> None:
        with self._db.transaction() as connection:
            connection.execute(
                mcp_sign_ins_table.insert().values(
                    state_hash=state_hash,
                    team=sign_in.team,
                    user_id=sign_in.user,
                    server=sign_in.server,
                    channel=sign_in.key.channel,
                    thread_ts=sign_in.key.thread_ts,
                    entry_idx=sign_in.index,
                    sealed=sign_in.sealed,
                    expires_at=sign_in.expires_at,
                )
            )

    def take_sign_in(self, state_hash: str) -> SignInRow | None:
        """The sign-in of this state, deleted in the same transaction: of two callbacks with
        one state (a replay, two processes) only one gets it."""
        table = mcp_sign_ins_table
        with self._db.transaction() as connection:
            row = connection.execute(
                select(table).where(table.c.state_hash == state_hash).with_for_update()
            ).first()
            if row is None:
                return None
            gone = connection.execute(delete(table).where(table.c.state_hash == state_hash))
            if gone.rowcount != 1:
                return None
        return SignInRow(
            row.team,
            row.user_id,
            row.server,
            ThreadKey(row.team, row.channel, row.thread_ts),
            row.entry_idx,
            row.sealed,
            row.expires_at,
        )

    def sign_in_pending(self, state_hash: str) -> bool:
        table = mcp_sign_ins_table
        with self._db.read() as connection:
            found = connection.execute(
                select(table.c.state_hash).where(table.c.state_hash == state_hash)
            ).first()
        return found is not None

    def take_sign_ins(self, team: str, user: str, server: str) -> list[SignInRow]:
        """The person's other sign-ins to the server still under way, taken (they connected:
        every run waiting for it goes on, and those links stop working)."""
        table = mcp_sign_ins_table
        where = (table.c.team == team) & (table.c.user_id == user) & (table.c.server == server)
        with self._db.transaction() as connection:
            rows = connection.execute(select(table).where(where).with_for_update()).all()
            connection.execute(delete(table).where(where))
        return [
            SignInRow(
                row.team,
                row.user_id,
                row.server,
                ThreadKey(row.team, row.channel, row.thread_ts),
                row.entry_idx,
                row.sealed,
                row.expires_at,
            )
            for row in rows
        ]

    def save_connection(self, row: ConnectionRow) -> None:
        table = mcp_connections_table
        with self._db.transaction() as connection:
            connection.execute(delete(table).where(_one(row.team, row.user, row.server)))
            connection.execute(
                table.insert().values(
                    team=row.team,
                    user_id=row.user,
                    server=row.server,
                    sealed=row.sealed,
                    expires_at=row.expires_at,
                    scope=row.scope,
                    connected_at=row.connected_at,
                )
            )

    def mcp_connection(self, team: str, user: str, server: str) -> ConnectionRow | None:
        with self._db.read() as connection:
            row = connection.execute(
                select(mcp_connections_table).where(_one(team, user, server))
            ).first()
        return None if row is None else _connection(row)

    def mcp_connections(
        self, team: str | None = None, user: str | None = None
    ) -> list[ConnectionRow]:
        """The connections of a workspace (None: every one), or of one person there."""
        table = mcp_connections_table
        query = select(table).order_by(table.c.team, table.c.user_id, table.c.server)
        if team is not None:
            query = query.where(table.c.team == team)
        if user is not None:
            query = query.where(table.c.user_id == user)
        with self._db.read() as connection:
            return [_connection(row) for row in connection.execute(query)]

    def delete_connection(self, team: str, user: str, server: str) -> ConnectionRow | None:
        """The connection removed; what it was (for a revocation at the server), or None."""
        with self._db.transaction() as connection:
            row = connection.execute(
                select(mcp_connections_table).where(_one(team, user, server)).with_for_update()
            ).first()
            if row is None:
                return None
            connection.execute(delete(mcp_connections_table).where(_one(team, user, server)))
        return _connection(row)

    def save_mcp_client(self, server: str, issuer: str, sealed: str, at: str) -> None:
        table = mcp_clients_table
        where = (table.c.server == server) & (table.c.issuer == issuer)
        with self._db.transaction() as connection:
            connection.execute(delete(table).where(where))
            connection.execute(
                table.insert().values(server=server, issuer=issuer, sealed=sealed, registered_at=at)
            )

    def mcp_client(self, server: str, issuer: str) -> str | None:
        """The sealed registration of our client with the server's authorization server."""
        table = mcp_clients_table
        where = (table.c.server == server) & (table.c.issuer == issuer)
        with self._db.read() as connection:
            sealed = connection.scalar(select(table.c.sealed).where(where))
        return None if sealed is None else str(sealed)


def _one(team: str, user: str, server: str) -> ColumnElement[bool]:
    table = mcp_connections_table
    return (table.c.team == team) & (table.c.user_id == user) & (table.c.server == server)


def _connection(row: Row[Any]) -> ConnectionRow:
    return ConnectionRow(
        row.team,
        row.user_id,
        row.server,
        row.sealed,
        row.expires_at,
        row.scope,
        row.connected_at,
    )
