"""The images of a thread's prompt: the newest few of its log, fetched again from Slack when a
prompt shows them, as `image_url` parts after the log text, within byte caps."""

from __future__ import annotations

import base64
import logging
from collections import OrderedDict
from dataclasses import dataclass, field

from assistant.model.request import ImagePart
from assistant.slack.files import DownloadError, SlackFiles
from context.storage import ImageRef, Store, ThreadKey
from context.storage.async_store import async_store

log = logging.getLogger(__name__)


@dataclass
class ImageParts:
    """The image parts of a thread's prompt: its `max_images` newest images, newest first
    until `max_prompt_bytes` of data is reached, each at most `max_image_bytes`; oldest first
    in the prompt. Bytes fetched are kept (least recently used out) up to the same total."""

    files: SlackFiles
    store: Store
    max_images: int
    max_image_bytes: int
    max_prompt_bytes: int
    _cache: OrderedDict[str, tuple[str, int]] = field(default_factory=OrderedDict)
    _cached_bytes: int = 0

    async def parts(self, key: ThreadKey) -> list[ImagePart]:
        if self.max_images == 0:
            return []
        refs = await async_store(self.store).read(self.store.recent_images, key, self.max_images)
        chosen: list[str] = []
        total = 0
        for index, ref in reversed(refs):
            found = await self._data_url(ref, index)
            if found is None:
                continue
            url, size = found
            if total + size > self.max_prompt_bytes:
                break  # older images stay markers in the text
            total += size
            chosen.append(url)
        return [{"type": "image_url", "image_url": {"url": url}} for url in reversed(chosen)]

    async def _data_url(self, ref: ImageRef, index: int) -> tuple[str, int] | None:
        """The image as a data URL, and its size in bytes."""
        if ref.file_id in self._cache:
            self._cache.move_to_end(ref.file_id)
            return self._cache[ref.file_id]
        try:
            data, mimetype = await self.files.image(ref, self.max_image_bytes)
        except DownloadError as exc:
            # It was readable when recorded (else it would not be kept): deleted since, or
            # access lost. The marker stays in the text; the prompt goes without it.
            log.warning("image %s of entry %d left out: %s", ref.name, index, exc)
            return None
        url = f"data:{mimetype};base64,{base64.b64encode(data).decode('ascii')}"
        self._cache[ref.file_id] = (url, len(data))
        self._cached_bytes += len(data)
        while self._cached_bytes > self.max_prompt_bytes and len(self._cache) > 1:
            _, (_, dropped) = self._cache.popitem(last=False)
            self._cached_bytes -= dropped
        return url, len(data)
