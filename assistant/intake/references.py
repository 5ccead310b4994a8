"""Links to other Slack messages in a person's text (docs/log-format.md#linked-messages).

The linked message is read from Slack and written into the entry's text after the person's own
words, in the forms of the Aya bot this log format comes from: `<@U1> said:\\n"…"`, `I said:\\n"…"`
(the person's own message), `You said earlier: "…"` (the bot's), and for a message with an image or
audio `This is a message referencing a message with an image from <@U1>. <@U1> said:\\n"…"`. Its
images are kept like the person's own (`assistant.intake.media`). Nothing of a linked message is
read unless the person who linked it may see its conversation (`assistant.intake.link_access`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.intake.link_access import LinkAccess, Poster
from assistant.intake.media import kind_of
from assistant.slack.connection import SLACK_UNREACHED, slack_error
from assistant.slack.text import clean_user_text

# <https://acme.slack.com/archives/C0123/p1712233980000100?thread_ts=1712233900.000100&cid=C0123|label>
LINK = re.compile(
    r"<https://([A-Za-z0-9-]+(?:\.enterprise)?\.slack\.com)/archives/([A-Z0-9]+)/p(\d{10})(\d{6})"
    r"(?:\?([^|>]*))?(?:\|[^>]*)?>"
)
# Per message: each costs Slack API calls (the permission check, then the message) before the
# event is acknowledged.
MAX_REFERENCES = 3


@dataclass(frozen=True)
class Link:
    channel: str
    ts: str
    thread_ts: str | None
    host: str  # the workspace's address as the link gives it, e.g. acme.slack.com


def links_in(text: str) -> list[Link]:
    found: list[Link] = []
    for match in LINK.finditer(text):
        host, channel, seconds, micros, query_string = match.groups()
        thread_ts = (parse_qs(query_string or "").get("thread_ts") or [None])[0]
        link = Link(channel, f"{seconds}.{micros}", thread_ts, host)
        if link not in found:
            found.append(link)
    return found[:MAX_REFERENCES]


async def fetch(client: AsyncWebClient, link: Link) -> dict[str, Any] | None:
    """The linked message, or None when Slack has no such message for the app."""
    if link.thread_ts and link.thread_ts != link.ts:
        page = await client.conversations_replies(
            channel=link.channel,
            ts=link.thread_ts,
            oldest=link.ts,
            latest=link.ts,
            inclusive=True,
            limit=2,
        )
    else:
        page = await client.conversations_history(
            channel=link.channel, oldest=link.ts, latest=link.ts, inclusive=True, limit=1
        )
    messages: list[dict[str, Any]] = page.get("messages", [])
    return next((m for m in messages if m.get("ts") == link.ts), None)


def reference_text(message: dict[str, Any], reader: str, bot_user_id: str | None) -> str:
    """The quoting form for `message`, as read by the user `reader` (a bare id)."""
    author = message.get("user") or message.get("bot_id") or "unknown"
    kinds = {kind_of(f) for f in _listed_files(message) if isinstance(f, dict)}
    media = "audio" if "audio" in kinds else "an image" if "image" in kinds else None
    text = message.get("text")
    content = clean_user_text(text if isinstance(text, str) else "", None).strip()
    if not content:
        content = "[Audio Message]" if media == "audio" else "[Image]" if media else ""
    if bot_user_id is not None and author == bot_user_id:
        return f'You said earlier: "{content}"'
    mine = author == reader
    said = "I said:" if mine else f"<@{author}> said:"
    if media is not None:
        source = "me" if mine else f"<@{author}>"
        intro = f"This is a message referencing a message with {media} from {source}."
        return f'{intro} {said}\n"{content}"'
    return f'{said}\n"{content}"'


async def references(
    client: AsyncWebClient,
    access: LinkAccess,
    text: str,
    poster: Poster,
    bot_user_id: str | None,
) -> tuple[list[str], list[dict[str, Any]]]:
    """The reference texts for the links in `text` (posted by `poster`), and the files of
    the linked messages. A link `poster` may not follow, or whose permission Slack could not
    confirm, gets a note and nothing of its message is read."""
    texts: list[str] = []
    files: list[dict[str, Any]] = []
    for link in links_in(text):
        try:
            refused = await access.refusal(poster, link.channel, link.host)
            if refused is not None:
                texts.append(refused)
                continue
            message = await fetch(client, link)
        except SlackApiError as exc:
            texts.append(f"(The linked message could not be read: {slack_error(exc)}.)")
            continue
        except SLACK_UNREACHED:
            texts.append("(The linked message could not be read: Slack could not be reached.)")
            continue
        if message is None:
            texts.append("(The linked message could not be read: Slack has no such message.)")
            continue
        texts.append(reference_text(message, poster.user, bot_user_id))
        # What is not even an object goes on too: the caller leaves it out as malformed.
        files += [
            f for f in _listed_files(message) if not isinstance(f, dict) or kind_of(f) == "image"
        ]
    return texts, files


def _listed_files(message: dict[str, Any]) -> list[Any]:
    """A linked message's `files`, as Slack gave them (read from Slack, so still unchecked)."""
    files = message.get("files")
    return files if isinstance(files, list) else []
