"""What the model server was found not to do, per model, for the life of the process
(docs/architecture.md#slack-and-the-model): one `ModelClient` talks to one server, so its
`ModelLimits` are that server's. A quirk of one model never changes how another is asked."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


# Calibration from the prompt tokens a server reports: how far one call's ratio moves the
# learned one when it is lower (a higher one is taken at once: the budget must hold), and the
# bound past which a ratio says more about the request (images, a template's own text) than
# about the tokenizer.
CALIBRATION_EASING = 0.25
MAX_SCALE = 4.0
MIN_CALIBRATION_TOKENS = 200  # a smaller prompt is mostly the fixed part: its ratio is noise

# A model is asked in the constrained mode on evidence that its server ignores tool_choice: a
# probe answered in plain text (at start, `ModelClient.probe`), or this many replies in plain
# text in a row to requests that required a tool call (one is a gateway's hiccup as often as a
# server's habit). After JSON_RECHECK_SECONDS the server is probed again, in the background: a
# server restarted with a template that takes tools gets its tool calls back.
PLAIN_TEXT_SWITCH = 3
JSON_RECHECK_SECONDS = 1800.0


@dataclass(frozen=True)
class ServerWindow:
    """The context window a server named for a model, in its tokens (None: it named none, the
    configured one holds), and how many tokens the server counts for each of our estimate's
    (above 1 when the estimate undercounts the model's tokenizer: the log's budget is cut by as
    much)."""

    tokens: int | None
    scale: float = 1.0
    answer: int | None = None  # the answer's cap learned from the server (else the setting's)


@dataclass
class ModelLimits:
    """Per model name: asked for whole answers (not streamed), asked without images, asked in
    the constrained mode, and the window its server named. Read and written from the model
    client's thread and the runs'. `clock`: seconds, for the constrained mode's recheck."""

    _whole: set[str] = field(default_factory=set)
    _no_images: set[str] = field(default_factory=set)
    # Asked in the constrained mode (json_mode.py): since when (the clock's), and why.
    _json: dict[str, float] = field(default_factory=dict)
    _plain: dict[str, int] = field(default_factory=dict)  # plain-text replies in a row
    _rechecking: set[str] = field(default_factory=set)  # a probe is under way
    _windows: dict[str, int] = field(default_factory=dict)
    _scales: dict[str, float] = field(default_factory=dict)
    _answers: dict[str, int] = field(default_factory=dict)  # learned answer caps
    _lock: threading.Lock = field(default_factory=threading.Lock)
    clock: Callable[[], float] = time.monotonic

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
                why,
                model,
            )

    def answers_in_json(self, model: str) -> bool:
        with self._lock:
            return model in self._json

    def ask_in_json(self, model: str, why: str) -> None:
        """From now on `model` is asked for its tool call in the constrained mode (until a
        probe JSON_RECHECK_SECONDS later finds tool_choice honoured)."""
        with self._lock:
            first = model not in self._json
            self._json[model] = self.clock()
            self._plain.pop(model, None)
            self._rechecking.discard(model)
        if first:
            log.warning(
                "the model service %s for %r; asking that model for its tool calls as JSON "
                "(response_format) from now on (ASSISTANT_TOOL_MODE=tools keeps tool calls)",
                why,
                model,
            )

    def answered_in_plain_text(self, model: str, why: str) -> bool:
        """A reply in plain text to a request that required a tool call; whether it was the
        PLAIN_TEXT_SWITCH-th in a row, and `model` is asked in the constrained mode from now on."""
        with self._lock:
            count = self._plain.get(model, 0) + 1
            self._plain[model] = count
        if count < PLAIN_TEXT_SWITCH:
            log.info(
                "the model service %s for %r (%d of %d in a row before asking it as JSON)",
                why,
                model,
                count,
                PLAIN_TEXT_SWITCH,
            )
            return False
        self.ask_in_json(model, f"{why} {count} times in a row")
        return True

    def honours_tool_choice(self, model: str) -> None:
        """`model` answered with a tool call where one was required: the plain-text replies
        before it were no habit, and a model asked as JSON is asked with tools again."""
        with self._lock:
            self._plain.pop(model, None)
            self._rechecking.discard(model)
            switched = self._json.pop(model, None) is not None
        if switched:
            log.warning(
                "the model service answered a probe for %r with a tool call, as tool_choice "
                '"required" asks; asking that model with tools again',
                model,
            )

    def recheck_due(self, model: str) -> bool:
        """Whether `model`, asked as JSON for JSON_RECHECK_SECONDS, is to be probed again
        now: True once (the caller probes), until the probe's answer is known."""
        with self._lock:
            since = self._json.get(model)
            if since is None or model in self._rechecking:
                return False
            if self.clock() - since < JSON_RECHECK_SECONDS:
                return False
            self._rechecking.add(model)
            return True

    def recheck_failed(self, model: str) -> None:
        """The probe got no answer: `model` stays asked as JSON, probed again later."""
        with self._lock:
            if model in self._json:
                self._json[model] = self.clock()
            self._rechecking.discard(model)

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
        """The window named for `model`, the scale and the answer's cap learned for it; None
        when none is."""
        with self._lock:
            tokens, scale = self._windows.get(model), self._scales.get(model)
            answer = self._answers.get(model)
        scale = 1.0 if scale is None else scale
        if tokens is None and scale == 1.0 and answer is None:
            return None
        return ServerWindow(tokens, scale, answer)

    def answer_tokens(self, model: str) -> int | None:
        """The answer's cap learned for `model` (None: ASSISTANT_ANSWER_TOKENS holds)."""
        with self._lock:
            return self._answers.get(model)

    def remember_answer_tokens(self, model: str, tokens: int) -> None:
        with self._lock:
            self._answers[model] = tokens

    def remember_window(self, model: str, window: ServerWindow) -> None:
        """The smaller window and the larger correction hold."""
        with self._lock:
            if window.tokens is not None:
                known = self._windows.get(model)
                self._windows[model] = window.tokens if known is None else min(known, window.tokens)
            self._scales[model] = max(self._scales.get(model, 1.0), window.scale)

    def calibrate(self, model: str, server_tokens: int, estimate: int) -> float | None:
        """Learns from one call's prompt, `estimate` of our tokens that the server counted as
        `server_tokens`, how many of ours one of its tokens is worth: never below 1 (the
        estimate's own count stands when it counts more), at most MAX_SCALE, a higher ratio
        taken at once and a lower one eased into. The scale now, or None when the call
        taught nothing (too small a prompt, a count out of bounds)."""
        if estimate < MIN_CALIBRATION_TOKENS or server_tokens <= 0:
            return None
        ratio = server_tokens / estimate
        if ratio > MAX_SCALE:
            return None
        ratio = max(1.0, ratio)
        with self._lock:
            known = self._scales.get(model)
            if known is None or ratio >= known:
                scale = ratio
            else:
                scale = known + CALIBRATION_EASING * (ratio - known)
            self._scales[model] = scale
        if known is None and scale > 1.0:
            log.info(
                "the model server counts %.2f tokens for each of the estimate's for %r; "
                "the prompt budget is cut by as much",
                scale,
                model,
            )
        return scale
