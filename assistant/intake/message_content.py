"""What a message carries, read in one pass (docs/architecture.md#who-acknowledges-what): the
person's words, a marker per file (an image checked, a voice clip transcribed), then what each
linked message said that its poster may see, and the images to keep with the entry. Files and
links are read at once; what is not read by the deadline is noted instead."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from assistant.intake import references
from assistant.intake.deadline import until
from assistant.intake.event_shapes import files_unreadable, readable_files
from assistant.intake.link_access import LinkAccess, Poster
from assistant.intake.media import Attachments, Transcribe, check_images, describe_files
from assistant.slack.files import SlackFiles
from assistant.slack.text import clean_user_text

log = logging.getLogger(__name__)

LINK_TOO_SLOW = "(The linked message could not be read in time.)"
Linked = tuple[list[str], list[dict[str, Any]]]  # what references.references gives


@dataclass(frozen=True)
class MessageContent:
    client: AsyncWebClient
    files: SlackFiles
    transcribe: Transcribe
    links: LinkAccess  # who may see which linked message
    max_image_bytes: int

    async def read(
        self, team: str, event: dict[str, Any], bot_user_id: str | None, deadline: float
    ) -> tuple[str, Attachments]:
        """The entry's text: the person's words, a marker per file, then what each linked
        message said; and the images to keep with it (its own, then the linked ones')."""
        raw = event.get("text", "")
        files = describe_files(
            event.get("files") or [], self.files, self.transcribe, self.max_image_bytes, deadline
        )
        poster = Poster(team, event["channel"], event["user"])
        links = references.references(self.client, self.links, raw, poster, bot_user_id)
        found, (said, linked) = await asyncio.gather(files, self._linked(links, raw, deadline))
        parts = [clean_user_text(raw, bot_user_id), *found.markers, *said]
        return "\n".join(part for part in parts if part), Attachments.joined([found, linked])

    async def _linked(
        self, links: Awaitable[Linked], raw: str, deadline: float
    ) -> tuple[list[str], Attachments]:
        """What the linked messages said, and their images, as far as read by `deadline`."""
        (read,) = await until(deadline, [links], [None])
        if read is None:
            return [LINK_TOO_SLOW] * len(references.links_in(raw)), Attachments()
        said, linked_files = read
        files, wrong = readable_files(linked_files)
        found = await check_images(files, self.files, self.max_image_bytes, deadline)
        if wrong:
            log.warning("a linked message's files left out as malformed: %s", "; ".join(wrong))
            found.problems.append(files_unreadable(len(wrong), "a linked message"))
        return said, found
