"""`views.publish`, `views.open`, `usergroups.users.list` and `chat.postEphemeral` for
`FakeSlack`, with Slack's argument rules and errors:

- `views.publish`: a `home` view for `user_id` (`user_not_found` for no such user); it
  replaces the user's home tab, kept in `ViewMethods.home_tabs`.
- `views.open`: a `modal` view, exchanged for a `trigger_id` that Slack gave the app in an
  interaction (`issue_trigger`): `invalid_trigger_id` for one Slack never gave,
  `exchanged_trigger_id` the second time, `expired_trigger_id` after 3 seconds.
- Both: a view of the wrong type, or one breaking Block Kit's documented limits
  (`slack_blocks`), is `invalid_arguments` with Slack's `response_metadata.messages`.
- `usergroups.users.list`: the members of a group seeded with `add_usergroup`
  (`no_such_subteam` otherwise).
- `chat.postEphemeral`: only to a member of the channel (`user_not_in_channel`); shown to
  that person only, so it is kept apart (`ephemerals`), never in the channel's messages.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

from assistant.fakes import ids
from assistant.fakes.slack.blocks import view_problems
from assistant.fakes.slack.conversations import Conversations
from assistant.fakes.slack.params import Handler, json_field, required
from assistant.fakes.slack.store import SlackError, SlackStore

TRIGGER_SECONDS = 3.0  # Slack: a trigger_id expires three seconds after it was issued


class ViewMethods:
    """Part of `FakeSlack`, which sets the attributes declared here."""

    store: SlackStore
    team_id: str
    app_id: str
    bot_id: str
    conversations: Conversations
    _cond: threading.Condition

    def _init_views(self) -> None:
        self.home_tabs: dict[str, dict[str, Any]] = {}  # user id → the published home view
        self.modals: list[dict[str, Any]] = []  # every view opened, in order
        self.ephemerals: list[dict[str, Any]] = []  # every ephemeral message, in order
        self._usergroups: dict[str, list[str]] = {}
        self._triggers: dict[str, float] = {}  # trigger id → when issued (monotonic)

    def _view_methods(self) -> dict[str, Handler]:
        return {
            "views.publish": self._views_publish,
            "views.open": self._views_open,
            "usergroups.users.list": self._usergroups_users_list,
            "chat.postEphemeral": self._chat_post_ephemeral,
        }

    # -- seeding -------------------------------------------------------------------------------

    def issue_trigger(self) -> str:
        """A trigger id as Slack puts in an interaction payload, good for one views.open."""
        trigger = f"{int(time.time())}.{ids.next_ts().split('.')[1]}.{uuid.uuid4().hex[:12]}"
        with self._cond:
            self._triggers[trigger] = time.monotonic()
        return trigger

    def add_usergroup(self, group: str, members: list[str]) -> None:
        with self._cond:
            self._usergroups[group] = list(members)

    # -- Web API -------------------------------------------------------------------------------

    def _views_publish(self, params: dict[str, Any]) -> dict[str, Any]:
        user = required(params, "user_id", "invalid_arguments")
        view = _view_arg(params, "home")
        if user not in self.store.users:
            raise SlackError("user_not_found")
        published = self._rendered(view)
        self.home_tabs[user] = published
        return {"ok": True, "view": published}

    def _views_open(self, params: dict[str, Any]) -> dict[str, Any]:
        trigger = required(params, "trigger_id", "invalid_trigger_id")
        view = _view_arg(params, "modal")
        issued = self._triggers.get(trigger)
        if issued is None:
            raise SlackError("invalid_trigger_id")
        if issued < 0:
            raise SlackError("exchanged_trigger_id")
        if time.monotonic() - issued > TRIGGER_SECONDS:
            raise SlackError("expired_trigger_id")
        self._triggers[trigger] = -1.0  # exchanged: good once
        opened = self._rendered(view)
        self.modals.append(opened)
        return {"ok": True, "view": opened}

    def _usergroups_users_list(self, params: dict[str, Any]) -> dict[str, Any]:
        group = required(params, "usergroup", "no_such_subteam")
        members = self._usergroups.get(group)
        if members is None:
            raise SlackError("no_such_subteam")
        return {"ok": True, "users": list(members)}

    def _chat_post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = required(params, "channel", "channel_not_found")
        user = required(params, "user", "user_not_found")
        if not params.get("text") and not params.get("blocks") and not params.get("attachments"):
            raise SlackError("no_text")
        conversation = self.conversations._visible({"channel": channel})
        if user not in self.store.users:
            raise SlackError("user_not_found")
        if user not in conversation.members:
            raise SlackError("user_not_in_channel")
        self.ephemerals.append({"channel": channel, "user": user, **params})
        return {"ok": True, "message_ts": ids.next_ts()}

    def _rendered(self, view: dict[str, Any]) -> dict[str, Any]:
        """The view as Slack answers with it: ids, hash, state."""
        return {
            "id": "V" + uuid.uuid4().hex[:10].upper(),
            "team_id": self.team_id,
            "type": view["type"],
            "blocks": view.get("blocks", []),
            "private_metadata": view.get("private_metadata", ""),
            "callback_id": view.get("callback_id", ""),
            "state": {"values": {}},
            "hash": f"{int(time.time())}.{uuid.uuid4().hex[:8]}",
            "title": view.get("title"),
            "clear_on_close": False,
            "notify_on_close": False,
            "close": view.get("close"),
            "submit": view.get("submit"),
            "previous_view_id": None,
            "root_view_id": None,
            "app_id": self.app_id,
            "external_id": view.get("external_id", ""),
            "app_installed_team_id": self.team_id,
            "bot_id": self.bot_id,
        }


def _view_arg(params: dict[str, Any], kind: str) -> dict[str, Any]:
    view = json_field(params.get("view"))
    if not isinstance(view, dict):
        raise SlackError("invalid_arguments", ["[ERROR] must be an object [json-pointer:/view]"])
    problems = view_problems(view)
    if view.get("type") != kind:
        problems.insert(0, f"[ERROR] must be {kind} [json-pointer:/view/type]")
    if problems:
        raise SlackError("invalid_arguments", problems)
    return view
