"""The Protocol of people's sign-ins to MCP servers (`McpConnectionStore`): part of `Store`
(`context.storage.base`). Every `sealed` value is ciphertext; the store never decrypts."""

from __future__ import annotations

from typing import Protocol

from context.storage.mcp_connections import ConnectionRow, SignInRow


class McpConnectionStore(Protocol):
    def save_sign_in(self, state_hash: str, sign_in: SignInRow) -> None:
        """A sign-in under way, found again by its state's hash only."""
        ...

    def take_sign_in(self, state_hash: str) -> SignInRow | None:
        """The sign-in of this state, removed: single use, whichever process asks first."""
        ...

    def sign_in_pending(self, state_hash: str) -> bool:
        """Whether the sign-in of this state is still under way (not yet taken)."""
        ...

    def take_sign_ins(self, team: str, user: str, server: str) -> list[SignInRow]:
        """A person's sign-ins to a server under way, taken (removed, and returned)."""
        ...

    def save_connection(self, row: ConnectionRow) -> None:
        """A person's tokens for a server, replacing any before."""
        ...

    def mcp_connection(self, team: str, user: str, server: str) -> ConnectionRow | None: ...

    def mcp_connections(
        self, team: str | None = None, user: str | None = None
    ) -> list[ConnectionRow]: ...

    def delete_connection(self, team: str, user: str, server: str) -> ConnectionRow | None:
        """The connection removed, and what it was."""
        ...

    def save_mcp_client(self, server: str, issuer: str, sealed: str, at: str) -> None:
        """The client registered with a server's authorization server."""
        ...

    def mcp_client(self, server: str, issuer: str) -> str | None: ...
