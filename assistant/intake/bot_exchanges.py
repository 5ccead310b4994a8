"""How long the app answers another bot in one thread (`ASSISTANT_ANSWER_BOTS=true`): two bots
that answer each other would talk for as long as they are fed, so a thread takes
ASSISTANT_MAX_BOT_EXCHANGES_PER_THREAD messages of each bot (docs/log-format.md#peoples-messages).
The next is not recorded; the thread is told once, by a message and a system entry (the
entry is how "once" is known, by any process)."""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import ENGLISH, N_, Words
from assistant.run.channels.channel_rules import PostAs
from assistant.run.core.leftovers import NOTICE_METADATA, briefly
from assistant.run.core.recorder import Recorder
from assistant.slack.connection import SLACK_FAILURES
from context.entry import UserEntry
from context.storage import ThreadKey

log = logging.getLogger(__name__)

NOTE = N_(
    "I have answered <@{bot}> {count} times in this thread, the most I answer another bot in "
    "one thread, so that two bots do not talk to each other forever. I will not answer its "
    "messages here any more."
)


def from_bot(message: dict[str, Any]) -> bool:
    """Whether a message event was posted by an app (a bot user, or the old `bot_message`)."""
    return bool(message.get("bot_id")) or message.get("subtype") == "bot_message"


def stop_line(bot: str, count: int) -> str:
    """The system entry of the thread's one note: the log says why the bot's next messages
    are missing."""
    return (
        f"<@{bot}> is a bot and was answered {count} times in this thread, the most another "
        "bot is (ASSISTANT_MAX_BOT_EXCHANGES_PER_THREAD): its messages here are no longer "
        "recorded or answered; the thread was told so."
    )


async def may_take_bot_message(
    recorder: Recorder,
    client: AsyncWebClient,
    key: ThreadKey,
    bot: str,
    limit: int,
    post_as: PostAs,
    words: Words = ENGLISH,
) -> bool:
    """Whether the message `bot` just sent to thread `key` is taken: while the thread holds
    fewer than `limit` of its messages. The first one past that tells the thread (in
    `words`' language: the channel's, no person's)."""
    if not await recorder.read(recorder.store.has_thread, key):
        return True
    entries = await recorder.entries(key)
    userid = f"<@{bot}>"
    count = sum(isinstance(e, UserEntry) and e.content.userid == userid for e in entries)
    if count < limit:
        return True
    line = stop_line(bot, count)
    if any(entry.content == line for entry in entries):
        log.info("a message of bot %s in %s not taken: %s answered already", bot, key, count)
        return False
    note = words.gettext(NOTE, bot=bot, count=count)
    try:
        await client.chat_postMessage(
            channel=key.channel,
            thread_ts=key.thread_ts,
            text=note,
            metadata=NOTICE_METADATA,
            **post_as,
        )
    except SLACK_FAILURES as exc:
        # Not recorded: the bot's next message tries to tell the thread again.
        log.warning("cannot tell %s that bot %s is answered no more: %s", key, bot, briefly(exc))
        return False
    await recorder.record(key, line)
    return False
