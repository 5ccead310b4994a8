"""`users.info` for `FakeSlack`, and seeding the users it answers."""

from __future__ import annotations

import threading
from typing import Any

from assistant.fakes.slack.params import Handler, flag
from assistant.fakes.slack.store import SlackError, SlackStore


class UserMethods:
    """Part of `FakeSlack`, which sets the attributes declared here."""

    store: SlackStore
    _cond: threading.Condition

    def _user_methods(self) -> dict[str, Handler]:
        return {"users.info": self._users_info}

    def add_user(self, user_id: str, name: str, **fields: Any) -> dict[str, Any]:
        """Seed a user for `users.info` (see `SlackStore.add_user` for the fields)."""
        with self._cond:
            return self.store.add_user(user_id, name, **fields)

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = self.store.users.get(params.get("user", ""))
        if user is None:
            raise SlackError("user_not_found")
        if not flag(params.get("include_locale")):  # Slack's users.info: only when asked
            user = {k: v for k, v in user.items() if k != "locale"}
        return {"ok": True, "user": user}
