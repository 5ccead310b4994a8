"""`reactions.add` and `reactions.remove` for `FakeSlack`, and reading what a message has."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from assistant.fakes.slack.params import Handler, required
from assistant.fakes.slack.store import SlackStore


class ReactionMethods:
    """Part of `FakeSlack`, which sets the attributes declared here."""

    store: SlackStore
    _cond: threading.Condition
    _wait: Callable[..., Any]

    def _reaction_methods(self) -> dict[str, Handler]:
        return {"reactions.add": self._reactions_add, "reactions.remove": self._reactions_remove}

    def reactions(self, channel: str, ts: str) -> list[str]:
        """Reaction names currently on a message (added by the bot and not removed)."""
        with self._cond:
            return list(self.store.reactions.get((channel, ts), []))

    def wait_reaction_gone(self, name: str, timeout: float) -> None:
        """Block until no message carries the bot's reaction `name`. Counting the calls
        cannot tell: a run cut short after adding it (its lease lost) leaves it to the run
        that resumes the thread, whose own add is refused (`already_reacted`)."""

        def marked() -> list[tuple[str, str]]:
            return [at for at, names in self.store.reactions.items() if name in names]

        self._wait(
            lambda: None if marked() else True,
            timeout,
            lambda: f"{len(marked())} messages still carry :{name}:",
        )

    def _reactions_add(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts, name = _reaction_args(params)
        self.store.add_reaction(channel, ts, name)
        return {"ok": True}

    def _reactions_remove(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts, name = _reaction_args(params)
        self.store.remove_reaction(channel, ts, name)
        return {"ok": True}


def _reaction_args(params: dict[str, Any]) -> tuple[str, str, str]:
    channel = required(params, "channel", "channel_not_found")
    ts = required(params, "timestamp", "no_item_specified")
    name = required(params, "name", "invalid_name")
    return channel, ts, name
