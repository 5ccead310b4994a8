"""`chat.postMessage`, `chat.update`, `chat.delete` and `chat.getPermalink` for `FakeSlack`:
the bot's posts, stored like Slack stores them (`msg_too_long` past `max_text_length`)."""

from __future__ import annotations

from typing import Any

from assistant.fakes import ids
from assistant.fakes.slack.params import Handler, json_field, required
from assistant.fakes.slack.store import SlackError, SlackStore


class ChatMethods:
    """Part of `FakeSlack`, which sets the attributes declared here."""

    store: SlackStore
    team_id: str
    bot_user_id: str
    bot_id: str
    app_id: str
    max_text_length: int

    def _chat_methods(self) -> dict[str, Handler]:
        return {
            "chat.postMessage": self._chat_post_message,
            "chat.update": self._chat_update,
            "chat.delete": self._chat_delete,
            "chat.getPermalink": self._chat_get_permalink,
        }

    def _chat_post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = required(params, "channel", "channel_not_found")
        text = params.get("text") or ""
        blocks = json_field(params.get("blocks"))
        if not text and not blocks and not params.get("attachments"):
            raise SlackError("no_text")
        if len(text) > self.max_text_length:
            raise SlackError("msg_too_long")
        message: dict[str, Any] = {
            "user": self.bot_user_id,
            "ts": ids.next_ts(),
            "bot_id": self.bot_id,
            "app_id": self.app_id,
            "text": text,
            "team": self.team_id,
            "bot_profile": {
                "id": self.bot_id,
                "app_id": self.app_id,
                "name": ids.BOT_USER_NAME,
                "deleted": False,
                "team_id": self.team_id,
            },
        }
        if params.get("thread_ts"):
            message["thread_ts"] = params["thread_ts"]
        if blocks:
            message["blocks"] = blocks
        if params.get("metadata"):
            message["metadata"] = json_field(params["metadata"])
        message.update(customized(params))
        stored = self.store.add(channel, message)
        return {"ok": True, "channel": channel, "ts": stored["ts"], "message": stored}

    def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = required(params, "channel", "channel_not_found")
        message = self.store.get(channel, required(params, "ts", "message_not_found"))
        if message is None:
            raise SlackError("message_not_found")
        text = params.get("text", message.get("text", ""))
        if len(text) > self.max_text_length:
            raise SlackError("msg_too_long")
        message["text"] = text
        if params.get("blocks"):
            message["blocks"] = json_field(params["blocks"])
        message["edited"] = {"user": self.bot_user_id, "ts": ids.next_ts()}
        rendered = self.store.render(channel, message)
        return {
            "ok": True,
            "channel": channel,
            "ts": message["ts"],
            "text": text,
            "message": rendered,
        }

    def _chat_delete(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = required(params, "channel", "channel_not_found")
        ts = required(params, "ts", "message_not_found")
        if self.store.messages.get(channel, {}).pop(ts, None) is None:
            raise SlackError("message_not_found")
        return {"ok": True, "channel": channel, "ts": ts}

    def _chat_get_permalink(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = required(params, "channel", "channel_not_found")
        ts = required(params, "message_ts", "message_not_found")
        return {"ok": True, "channel": channel, "permalink": permalink(self.store, channel, ts)}


def permalink(store: SlackStore, channel: str, ts: str) -> str:
    """A message's permalink as Slack writes it (a reply's names its thread)."""
    link = f"https://{ids.TEAM_DOMAIN}.slack.com/archives/{channel}/p{ts.replace('.', '')}"
    message = store.get(channel, ts)
    if message is not None and message.get("thread_ts"):
        link += f"?thread_ts={message['thread_ts']}&cid={channel}"
    return link


def customized(params: dict[str, Any]) -> dict[str, Any]:
    """A post's own name and icon (chat:write.customize), as Slack keeps them on the message."""
    found: dict[str, Any] = {}
    if params.get("username"):
        found["username"] = params["username"]
    if params.get("icon_emoji"):
        found["icons"] = {"emoji": params["icon_emoji"]}
    elif params.get("icon_url"):
        found["icons"] = {"image_48": params["icon_url"]}
    return found
