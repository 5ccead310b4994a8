"""What the model server was found not to do, per model, for the life of the process
(docs/architecture.md#slack-and-the-model): one `ModelClient` talks to one server, so its
`ModelLimits` are that server's. A quirk of one model never changes how another is asked."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerWindow:
    """The context window a server named for a model, in its tokens, and how many of our
    estimate's tokens one of them is worth (above 1 when the estimate undercounts the model's
    tokenizer: the log's budget is cut by as much)."""

    tokens: int
    scale: float = 1.0


@dataclass
class ModelLimits:
    """Per model name: asked for whole answers (not streamed), asked without images, and the
    window its server named. Read and written from the model client's thread and the runs'."""

    _whole: set[str] = field(default_factory=set)
    _no_images: set[str] = field(default_factory=set)
    _windows: dict[str, ServerWindow] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def streams(self, model: str) -> bool:
        with self._lock:
            return model not in self._whole

    def stop_streaming(self, model: str, why: str) -> None:
        with self._lock:
            first = model not in self._whole
            self._whole.add(model)
        if first:
            log.warning(
                "the model service %s for %r; asking for whole answers from that model from now on",
                why, model,
            )  # fmt: skip

    def takes_images(self, model: str) -> bool:
        with self._lock:
            return model not in self._no_images

    def refuse_images(self, model: str) -> bool:
        """Remembers that `model` takes no images; whether it was news."""
        with self._lock:
            first = model not in self._no_images
            self._no_images.add(model)
        return first

    def window(self, model: str) -> ServerWindow | None:
        with self._lock:
            return self._windows.get(model)

    def remember_window(self, model: str, window: ServerWindow) -> None:
        with self._lock:
            known = self._windows.get(model)
            if known is not None:  # the smaller window and the larger correction hold
                tokens = min(known.tokens, window.tokens)
                window = ServerWindow(tokens, max(known.scale, window.scale))
            self._windows[model] = window
