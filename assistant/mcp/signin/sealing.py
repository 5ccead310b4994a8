"""Secrets at rest: every token, PKCE verifier and registered client secret is sealed with
`cryptography`'s Fernet (AES-128-CBC and HMAC-SHA256, authenticated) before it reaches the
store. ASSISTANT_SECRET_KEY holds one key or several, comma-separated: the first seals, every
one opens (MultiFernet), so a key is rotated by putting a new one first: each row is sealed
again with it when it is next written (a refresh, a sign-in); dropping the old key turns the
rows only it opens into "connect again" (docs/operations.md#rotating-the-secret-key)."""

from __future__ import annotations

import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

KEY_SETTING = "ASSISTANT_SECRET_KEY"


class SealError(ValueError):
    """A sealed value none of the keys opens (a key dropped too soon, a row tampered with)."""


class Sealer:
    def __init__(self, keys: str) -> None:
        """`keys`: ASSISTANT_SECRET_KEY, Fernet keys (`Fernet.generate_key()`), comma-separated,
        the newest first. ValueError naming the setting, never the key."""
        parts = [k.strip() for k in keys.split(",") if k.strip()]
        if not parts:
            raise ValueError(f"{KEY_SETTING} holds no key")
        fernets: list[Fernet] = []
        for number, part in enumerate(parts, 1):
            try:
                fernets.append(Fernet(part.encode()))
            except (ValueError, TypeError):
                raise ValueError(
                    f"{KEY_SETTING}: key {number} is not a Fernet key (32 bytes, url-safe "
                    "base64: python -c 'from cryptography.fernet import Fernet; "
                    "print(Fernet.generate_key().decode())')"
                ) from None
        self._keys = MultiFernet(fernets)

    def __repr__(self) -> str:
        return "Sealer(…)"

    def seal(self, value: dict[str, Any]) -> str:
        return self._keys.encrypt(json.dumps(value, separators=(",", ":")).encode()).decode()

    def open(self, sealed: str) -> dict[str, Any]:
        try:
            value = json.loads(self._keys.decrypt(sealed.encode()))
        except (InvalidToken, ValueError):
            raise SealError(f"a sealed value that no key of {KEY_SETTING} opens") from None
        if not isinstance(value, dict):
            raise SealError("a sealed value that is not an object")
        return value

    def reseal(self, sealed: str) -> str:
        """The value sealed again with the first key (a rotation)."""
        try:
            return self._keys.rotate(sealed.encode()).decode()
        except InvalidToken:
            raise SealError(f"a sealed value that no key of {KEY_SETTING} opens") from None
