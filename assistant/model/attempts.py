"""The attempts of one model call (docs/architecture.md#slack-and-the-model): each attempt has
`OPENAI_TIMEOUT` seconds for the whole of it, from the request to the answer's last byte,
streamed or not, and so has each wait between attempts. A call therefore takes at most
(2 * `OPENAI_MAX_RETRIES` + 1) * `OPENAI_TIMEOUT`.

The openai client's own timeout bounds each read, not the call: a server that sends an SSE
`: keep-alive` comment every second, or trickles its answer, held a run for as long as it
liked. So the client makes one attempt per request (its `max_retries` is 0) and the retries
are made here, each attempt under `asyncio.timeout`, by the client's own rules: a dropped
connection, a timeout, HTTP 408, 409, 429 and 5xx are retried (`x-should-retry` decides when
the server sends it), after the server's `Retry-After` or 0.5 s doubling up to 8 s; and, as a
5xx, a 200 whose body is not a chat completion (a proxy between may answer properly next
time). A `Retry-After` longer than `OPENAI_TIMEOUT` is not waited for: the call fails.

A refusal of the model itself (OpenAI's 404 `model_not_found`, or a 400 or 404 that names the
model) is never retried: it is `ModelRefused`, which names the model, and no attempt does
better until the model asked for, or the server's models, change. Nor are two refusals of the
request itself, which another attempt of the same request would meet again: a prompt over the
server's context window (`ContextTooLong`, naming the window) and images a text-only model
cannot take (`ImagesRefused`, even as llama.cpp's HTTP 500); the caller asks again differently.
Every other failure's message carries what the server said (assistant/model/server_errors.py).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import aiohttp
import httpx2
import openai

from assistant.model.completion import NotACompletion
from assistant.model.server_errors import refuses_images, server_said, window_exceeded

T = TypeVar("T")

log = logging.getLogger(__name__)

RETRY_DELAY = 0.5  # the first wait between attempts, doubled each time, at most:
MAX_RETRY_DELAY = 8.0
RETRIED_STATUSES = frozenset({408, 409, 429})  # and every 5xx
DID_NOT_ANSWER = "the model did not answer in time"


def timed_out_note(attempts: int, seconds: float) -> str:
    """The log's system entry for a model call whose attempts the timeout cut before one
    answered (docs/log-format.md#how-a-run-ends)."""
    cut = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    return (
        f"The model's answer did not come within OPENAI_TIMEOUT ({seconds:g} s) and was asked "
        f"for again ({cut} cut off): a slow model server needs a smaller "
        "ASSISTANT_ANSWER_TOKENS or a longer OPENAI_TIMEOUT."
    )


class ModelError(Exception):
    """The model could not be reached or gave no usable answer; the message is for the log
    and holds no secret. `kind`: the failure in a word, for telemetry's `error.type` (an HTTP
    status, "timeout", "connection_error", "not_a_completion", "stream_error")."""

    def __init__(self, what: str, kind: str = "ModelError", reason: str = "") -> None:
        super().__init__(what)
        self.kind = kind
        self.reason = reason  # what the connection said ("Connection refused"), when known


class ModelRefused(ModelError):
    """The model service refused `model` itself: it does not exist there, or this key may
    not use it; `detail` says how (its HTTP status and error code)."""

    def __init__(self, model: str, detail: str, kind: str) -> None:
        super().__init__(f"the model service refused the model {model!r} ({detail})", kind)
        self.model = model
        self.detail = detail


class ContextTooLong(ModelError):
    """The server refused the prompt as longer than its context window of `window` tokens
    (it counted `prompt_tokens` in it, when it said); `model`: the model asked."""

    def __init__(self, model: str, what: str, window: int, prompt_tokens: int | None) -> None:
        super().__init__(what, "context_too_long")
        self.model = model
        self.window = window
        self.prompt_tokens = prompt_tokens


class ImagesRefused(ModelError):
    """The server refused the request's images: `model` takes none."""

    def __init__(self, model: str, what: str) -> None:
        super().__init__(what, "images_refused")
        self.model = model


class AttemptFailed(Exception):
    """One attempt failed: `what` for the log; whether another attempt may do better; how
    long the server asked to wait before it (None: it did not say); `refused`: the model the
    server refused, if that was the failure."""

    def __init__(
        self,
        what: str,
        retry: bool = True,
        wait: float | None = None,
        kind: str = "stream_error",
        reason: str = "",
        refused: str | None = None,
    ) -> None:
        super().__init__(what)
        self.what = what
        self.retry = retry
        self.wait = wait
        self.kind = kind
        self.reason = reason
        self.refused = refused


@dataclass(frozen=True)
class Attempts:
    """`retries` + 1 attempts at most, each within `timeout` seconds."""

    timeout: float
    retries: int

    async def run(
        self,
        attempt: Callable[[], Awaitable[T]],
        used: Callable[[], bool] = lambda: False,
        model: str = "",
        timed_out: Callable[[], None] = lambda: None,
    ) -> T:
        """The first attempt that succeeds; raises ModelError (ModelRefused when the server
        refused `model`, the model asked for). `used`: whether the failed attempt's answer has
        begun to be used (a stream's first calls): then it is final. `timed_out`: told of each
        attempt the timeout cut that is followed by another."""
        for number in range(self.retries + 1):
            deadline = asyncio.timeout(self.timeout)
            try:
                async with deadline:
                    return await attempt()
            except Exception as exc:
                if isinstance(exc, openai.APIStatusError) and not refuses_model(exc, model):
                    _refuses_request(exc, model)
                failed = _failure(exc, deadline.expired(), model)
                if failed is None:
                    raise
                quiet = not isinstance(exc, NotACompletion)
            if failed.refused is not None:
                raise ModelRefused(failed.refused, failed.what, failed.kind) from None
            wait = failed.wait
            if wait is None:
                wait = min(RETRY_DELAY * 2**number, MAX_RETRY_DELAY, self.timeout)
            if not failed.retry or used() or number == self.retries or wait > self.timeout:
                raise ModelError(failed.what, failed.kind, failed.reason) from None
            if failed.kind == "timeout":
                # A slow server's answer cut by the timeout: asked again, said plainly (a
                # model on a CPU writing past its cap takes minutes and looks like a hang).
                log.warning(
                    "the model %r did not answer within OPENAI_TIMEOUT (%g s); asking again "
                    "(attempt %d of %d)",
                    model,
                    self.timeout,
                    number + 2,
                    self.retries + 1,
                )
                timed_out()
            else:
                # The client's own retries were info; an answer that is not a completion warned.
                log.log(logging.INFO if quiet else logging.WARNING, "%s; retrying", failed.what)
            await asyncio.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")


def _refuses_request(error: openai.APIStatusError, model: str) -> None:
    """Raises ContextTooLong or ImagesRefused when `error` is one of those refusals."""
    what = what_failed(error, "the model service", "the model")
    if (exceeded := window_exceeded(error)) is not None:
        raise ContextTooLong(model, what, exceeded.window, exceeded.prompt_tokens) from None
    if refuses_images(error):
        raise ImagesRefused(model, what) from None


def _failure(exc: Exception, expired: bool, model: str) -> AttemptFailed | None:
    """What a failed attempt says, or None for an exception that is not the model's."""
    if isinstance(exc, AttemptFailed):
        return exc
    if isinstance(exc, TimeoutError) and expired:
        return AttemptFailed(DID_NOT_ANSWER, kind="timeout")
    if isinstance(exc, NotACompletion):
        what = f"the model service answered with {exc}, not a chat completion"
        return AttemptFailed(what, kind="not_a_completion")
    if isinstance(exc, openai.APIStatusError) and refuses_model(exc, model):
        detail = f"HTTP {exc.status_code}" + (f", {exc.code}" if exc.code else "")
        return AttemptFailed(detail, retry=False, kind=str(exc.status_code), refused=model)
    if isinstance(exc, openai.APIStatusError):
        response = exc.response
        return AttemptFailed(
            what_failed(exc, "the model service", "the model"),
            retry=_retried(response),
            wait=_retry_after(response.headers),
            kind=str(response.status_code),
        )
    if isinstance(exc, openai.APIError):
        retry = isinstance(exc, openai.APIConnectionError)  # not an error event in a stream
        kind = "connection_error" if retry else "stream_error"
        what = what_failed(exc, "the model service", "the model")
        return AttemptFailed(what, retry=retry, kind=kind, reason=connection_reason(exc))
    return None


def refuses_model(error: openai.APIStatusError, model: str) -> bool:
    """Whether the server refused the model itself: OpenAI's `model_not_found` (HTTP 404),
    or a 400 or 404 whose error names the model (its `param`, or its message: vLLM's and
    Ollama's say "The model `x` does not exist", "model \"x\" not found"). A 404 that names
    no model (a wrong OPENAI_BASE_URL) is not one."""
    if error.code == "model_not_found":
        return True
    if error.status_code not in (400, 404) or not model:
        return False
    return error.param == "model" or model in str(error.message)


def _retried(response: httpx2.Response) -> bool:
    """Whether the openai client would retry this answer."""
    should = response.headers.get("x-should-retry")
    if should in ("true", "false"):
        return should == "true"
    return response.status_code in RETRIED_STATUSES or response.status_code >= 500


def _retry_after(headers: httpx2.Headers) -> float | None:
    """The wait the server asks for, in seconds (`retry-after-ms`, or `retry-after` in
    seconds), or None."""
    for name, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        try:
            seconds = float(headers.get(name, "")) / divisor
        except ValueError:
            continue
        if seconds >= 0:
            return seconds
    return None


def what_failed(error: openai.APIError, service: str, responder: str) -> str:
    """What went wrong, for the log: no secret, no traceback; what the server said of it."""
    if isinstance(error, openai.APIStatusError):
        said = server_said(error)
        return f"{service} answered HTTP {error.status_code}" + (f": {said}" if said else "")
    if isinstance(error, openai.APITimeoutError) and not _connection_failed(error):
        return f"{responder} did not answer in time"
    if not isinstance(error, openai.APIConnectionError):  # an error event in a stream
        return f"{service} sent an error instead of the rest of its answer"
    return f"{service} could not be reached"


def connection_reason(error: BaseException) -> str:
    """What the connection under a failed call said, in a few words ("Connection refused",
    "Server disconnected"), from the first OS or aiohttp error among its causes; "" if none.
    Never the error's own text: it may hold a URL."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, OSError) and cause.errno:
            return os.strerror(cause.errno)
        if isinstance(cause, aiohttp.ServerDisconnectedError):
            return "Server disconnected"
        cause = cause.__cause__ or cause.__context__
    return ""


def _connection_failed(error: BaseException) -> bool:
    """Whether a "timeout" from the openai client was a refused or dropped connection: its
    aiohttp transport reports every connection error as a timeout (and it is retried as one),
    but the log should say what happened."""
    cause = error.__cause__
    while cause is not None:
        if isinstance(cause, aiohttp.ClientConnectionError) and not isinstance(
            cause, asyncio.TimeoutError
        ):
            return True
        cause = cause.__cause__
    return False
