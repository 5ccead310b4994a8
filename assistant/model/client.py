"""The model client: one Chat Completions call per step, through `AsyncOpenAI`
(docs/log-format.md#messages-of-a-call)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx2
import openai
from openai import AsyncOpenAI, DefaultAioHttpClient

from assistant.model.attempts import (
    AttemptFailed,
    Attempts,
    ImagesRefused,
    refuses_model,
    what_failed,
)
from assistant.model.completion import ModelReply, NotACompletion, parse_completion, reply_of
from assistant.model.handoff import Handoff
from assistant.model.instructions import SYSTEM_MESSAGE
from assistant.model.json_mode import (
    JsonCallStream,
    calls_from_json,
    json_instructions,
    response_format,
)
from assistant.model.limits import ModelLimits, ServerWindow
from assistant.model.observer import CallWatch, CallWatcher
from assistant.model.options import ModelOptions
from assistant.model.request import ImagePart, answer_limit, build_messages
from assistant.model.server_errors import (
    refuses_images,
    refuses_streaming,
    server_said,
    window_exceeded,
)
from assistant.model.server_window import ServerSettings, answer_cap, settings_of
from assistant.model.sse import SseData
from assistant.model.stream import (
    CallEnded,
    ReplyAssembler,
    ReplyEnded,
    StepEvent,
    TimedOut,
    parse_chunks,
    whole_events,
)
from assistant.model.tool_calls import TOOL_SCHEMAS, Tools
from context.urls import shown_url

T = TypeVar("T")

log = logging.getLogger(__name__)

IGNORED_TOOL_CHOICE = 'answered in plain text where tool_choice "required" asked for a tool call'
# The probe's request (`ModelClient.probe`): a log of one message that needs a tool call, as
# the app's prompts do, answered within PROBE_TOKENS.
PROBE_PROMPT = (
    '[{"index":0,"turn":0,"timestamp":"2026-01-01T00:00:00Z","role":"user",'
    '"content":{"userid":"<@U0PROBE>","text":"Say hello."}}]'
)
PROBE_TOKENS = 256
# A PNG of one white pixel, for `ModelClient.takes_images`.
PROBE_IMAGE = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4//8/"
    "AAX+Av4N70a4AAAAAElFTkSuQmCC"
)


@dataclass(frozen=True)
class Probe:
    """What a server did with the probe (`ModelClient.probe`)."""

    answered: bool = False
    failed: str = ""  # what went wrong, when it did not answer
    absent: bool = False  # it refused the model itself
    tool_call: bool = False  # it answered with a tool call, as tool_choice "required" asks
    streamed: bool = False
    usage: bool = False  # it reported the prompt's tokens
    refused_stream: str = ""  # what it said refusing to stream the probe
    too_long: bool = False  # it refused the probe's short prompt as over its window


# A streamed answer's text goes to the run at most this often (Slack gets it 4 times a second).
HANDOFF_PAUSE = 0.05


def _watched(watch: CallWatch, event: StepEvent) -> None:
    """Tell the watch what a streamed event says (before the run acts on it)."""
    if isinstance(event, CallEnded):
        watch.call_ended(event.name, event.id)
    elif isinstance(event, ReplyEnded):
        watch.ended(event.reply)
    elif not isinstance(event, TimedOut):
        watch.first_chunk()


class TranscriptionError(Exception):
    """The transcription service failed; the message holds no secret."""


class ModelClient:
    """The openai client, on an event loop of its own in its own thread: building a request
    and parsing its answer costs milliseconds of CPU a call (most of the serving process's
    time under load), which must not hold up the loop that acknowledges Slack's events."""

    def __init__(self, options: ModelOptions) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="model-client", daemon=True
        )
        self._thread.start()
        self._model = options.model
        self._transcription_model = options.transcription_model
        # Every call caps the answer at the room the context budget keeps for it.
        self._answer_limit = answer_limit(self._model, options.answer_tokens)
        self._answer_tokens = options.answer_tokens
        self._answer_tokens_set = options.answer_tokens_set
        self._temperature = options.temperature
        self._instructions = options.instructions
        self._tool_mode = options.tool_mode
        # OPENAI_TIMEOUT bounds each attempt of a call, request to last byte, and the retries
        # are made with it (assistant/model/attempts.py): the client makes one per request.
        self._attempts = Attempts(options.timeout, options.max_retries)
        # What the server was found not to do, per model (for this process): stream answers
        # with tool calls, take images; and the window it named.
        self.limits = ModelLimits()
        # The models whose server was asked its window (OpenAI's own API is not: it tells none).
        self._asked_window: set[str] = set()
        self.told: dict[str, ServerSettings] = {}  # what the server told of itself, per model
        self._ask_windows = options.base_url is not None
        self._client = AsyncOpenAI(
            api_key=options.api_key,
            base_url=options.base_url,
            timeout=options.timeout,
            max_retries=0,
            # aiohttp, as openai documents for many concurrent requests: httpx's pool scans
            # every open connection on each request, and hundreds of runs keep hundreds open.
            http_client=DefaultAioHttpClient(),
        )
        # Where the model's server is, as the log names it (never its key or path).
        self.where = shown_url(str(self._client.base_url))
        # Transcriptions keep the client's retries: their reads are bounded by the event's
        # own deadline (assistant/intake/deadline.py).
        self._transcriber = self._client.with_options(max_retries=options.max_retries)
        self.watcher: CallWatcher | None = None  # telemetry, when it is on
        self._background: set[concurrent.futures.Future[None]] = set()
        self._background_lock = threading.Lock()

    async def __aenter__(self) -> Self:
        """`async with ModelClient(options) as model:` the one way a command owns a client
        (`assistant eval`'s asker and judge, `assistant replay`): closed on the way out."""
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _watch(self, prompt_text: str, model: str | None, streamed: bool) -> CallWatch | None:
        if self.watcher is None:
            return None
        args = self._model_args(model)
        cap = args.get("max_tokens", args.get("max_completion_tokens"))
        return self.watcher.call(args["model"], cap, streamed, prompt_text)

    async def _on_own_loop(self, work: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._loop))

    async def next_step(
        self,
        prompt_text: str,
        images: Sequence[ImagePart] = (),
        model: str | None = None,
        tools: Tools = TOOL_SCHEMAS,
        estimate: int | None = None,
    ) -> ModelReply:
        """Ask the model for its next tool calls on the log as it is now. `model`: the
        channel's, instead of ASSISTANT_MODEL; `tools`: the schemas of the tools offered;
        `estimate`: the request's tokens by the budget's counter, which the server's count of
        them calibrates (`ModelLimits`)."""
        learn = self._learning(images, model, estimate)
        watch = self._watch(prompt_text, model, streamed=False)
        try:
            reply = await self._on_own_loop(self._next_step(prompt_text, images, model, tools))
        except BaseException as exc:
            if watch is not None:
                watch.failed(exc)
            raise
        if watch is not None:
            watch.ended(reply)
        learn(reply)
        return self._named(reply, model)

    async def stream_step(
        self,
        prompt_text: str,
        images: Sequence[ImagePart] = (),
        model: str | None = None,
        tools: Tools = TOOL_SCHEMAS,
        estimate: int | None = None,
    ) -> AsyncIterator[StepEvent]:
        """Ask the model for its next tool calls, streamed: each call as it starts, the
        pieces of its arguments, each call once complete, then the whole reply. A server that
        does not stream gives the same events once its whole answer is in. Raises ModelError."""
        learn = self._learning(images, model, estimate)
        handoff: Handoff[StepEvent] = Handoff(asyncio.get_running_loop(), HANDOFF_PAUSE)

        def emit(events: list[StepEvent]) -> None:
            # A call complete goes at once: its post is finished while the model goes on.
            handoff.send(events, urgent=any(isinstance(e, CallEnded | ReplyEnded) for e in events))

        async def produce() -> None:
            try:
                await self._stream_step(prompt_text, images, emit, model, tools)
            except BaseException as exc:  # handed to the caller, in its loop
                handoff.close(exc)
            else:
                handoff.close()

        future = asyncio.run_coroutine_threadsafe(produce(), self._loop)
        watch = self._watch(prompt_text, model, streamed=True)
        try:
            async for event in handoff.receive():
                if watch is not None:
                    _watched(watch, event)
                if isinstance(event, ReplyEnded):
                    learn(event.reply)
                    event = ReplyEnded(self._named(event.reply, model))
                yield event
        except BaseException as exc:
            if watch is not None:
                watch.failed(exc)
            raise
        finally:
            future.cancel()  # the caller stopped early: the answer is not read further

    async def transcribe(self, name: str, data: bytes, mimetype: str) -> str:
        """The text of an audio file, through the transcription endpoint."""
        return await self._on_own_loop(self._transcribe(name, data, mimetype))

    async def close(self) -> None:
        await self._on_own_loop(self._close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        await asyncio.to_thread(self._thread.join)
        self._loop.close()

    async def _close(self) -> None:
        # Calls whose callers were cancelled (a stopping process) end before the client.
        others = asyncio.all_tasks() - {asyncio.current_task()}
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        await self._client.close()

    async def window(self, model: str | None) -> ServerWindow | None:
        """The window the server named for the model a call with `model` asks: from its
        refusal of a prompt as too long, else as the server tells it (asked once per model);
        with the answer's cap learned from it when ASSISTANT_ANSWER_TOKENS is not set."""
        name = self.asked(model)
        if self._ask_windows and name not in self._asked_window:
            self._asked_window.add(name)
            told = await self._on_own_loop(settings_of(self._client, name))
            self.told[name] = told
            if told.window is not None:
                log.info(
                    "the model server at %s has a window of %d tokens for %r",
                    self.where,
                    told.window,
                    name,
                )
                self.limits.remember_window(name, ServerWindow(told.window))
            cap = answer_cap(told, self._answer_tokens)
            if not self._answer_tokens_set and cap is not None:
                self.limits.remember_answer_tokens(name, cap)
                log.info(
                    "answers of %r are capped at %d tokens, from what the model server at %s "
                    "tells of its window (ASSISTANT_ANSWER_TOKENS sets the cap)",
                    name,
                    cap,
                    self.where,
                )
        return self.limits.window(name)

    def answer_tokens(self, model: str | None) -> int:
        """The cap on an answer of the model a call with `model` asks."""
        learned = self.limits.answer_tokens(self.asked(model))
        return self._answer_tokens if learned is None else learned

    async def ask_json(self, instructions: str, text: str, model: str | None = None) -> ModelReply:
        """One plain answer in JSON mode (a judge's: `assistant eval --judge`, live answers
        judged): `instructions` as the system message, `text` as the user's, temperature 0,
        no tools; of `model` (default the client's); with the client's attempts and deadline.
        Raises ModelError."""
        return await self._on_own_loop(self._ask_json(instructions, text, model))

    async def _ask_json(self, instructions: str, text: str, model: str | None) -> ModelReply:
        started = time.perf_counter()
        body = {
            "messages": [
                {"role": "system", "content": instructions},
                {"role": "user", "content": text},
            ],
            "response_format": {"type": "json_object"},
            "temperature": 0,
            **self._model_args(model),
        }

        async def attempt() -> ModelReply:
            async with self._request(body, False) as response:
                completion = parse_completion(
                    response.content, response.headers.get("content-type", "")
                )
            return reply_of(completion, (time.perf_counter() - started) * 1000)

        return await self._run(attempt, model=model or self._model)

    def _learning(
        self, images: Sequence[ImagePart], model: str | None, estimate: int | None
    ) -> Callable[[ModelReply], None]:
        """What a reply teaches about the model's server: how it counts tokens, from the
        prompt tokens of a request of `estimate` tokens (not when it carries images: the
        server counts them too); whether it ignores tool_choice, from replies in plain text
        in a row to requests that required a tool call (ASSISTANT_TOOL_MODE=auto only; a
        model asked as JSON for long enough is probed again meanwhile)."""
        name = self.asked(model)
        calibrating = estimate is not None and not (images and self.limits.takes_images(name))
        detecting = self._tool_mode == "auto" and not self.in_json(name)
        if self._tool_mode == "auto" and self.limits.recheck_due(name):
            self._in_background(self._recheck(name))

        def learn(reply: ModelReply) -> None:
            if calibrating and estimate is not None and reply.prompt_tokens is not None:
                self.limits.calibrate(name, reply.prompt_tokens, estimate)
            if detecting and reply.calls:
                self.limits.honours_tool_choice(name)
            elif detecting and (reply.text or "").strip():
                self.limits.answered_in_plain_text(name, IGNORED_TOOL_CHOICE)

        return learn

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        """`work` on the client's loop, not waited for (`settled` waits; `close` ends it)."""
        future = asyncio.run_coroutine_threadsafe(work, self._loop)
        with self._background_lock:
            self._background.add(future)
        future.add_done_callback(self._forget)

    def _forget(self, future: concurrent.futures.Future[None]) -> None:
        with self._background_lock:
            self._background.discard(future)

    async def settled(self) -> None:
        """Once the probes made in the background (a recheck of the constrained mode) end."""
        with self._background_lock:
            pending = list(self._background)
        for future in pending:
            with contextlib.suppress(BaseException):
                await asyncio.wrap_future(future)

    async def _recheck(self, name: str) -> None:
        """The constrained mode's recheck: the probe again, its answer applied."""
        self._applied(name, await self._probe(name, self._probe_body(name)))

    def in_json(self, model: str) -> bool:
        """Whether `model` is asked in the constrained mode (assistant/model/json_mode.py)."""
        if self._tool_mode == "auto":
            return self.limits.answers_in_json(model)
        return self._tool_mode == "json"

    async def probe(self, model: str | None = None) -> Probe:
        """One short call that requires a tool call, streamed with usage (asked again whole
        when the server refuses to stream it): what the server does with it. A server that
        answers it in plain text is asked in the constrained mode from then on, one that
        answers with a tool call with tools (ASSISTANT_TOOL_MODE=auto). Never raises for the
        server's failures: they are said."""
        name = self.asked(model)
        probe = await self._on_own_loop(self._probe(name, self._probe_body(name)))
        return self._applied(name, probe)

    def _probe_body(self, name: str) -> dict[str, Any]:
        return {
            "messages": build_messages(PROBE_PROMPT),
            "tools": TOOL_SCHEMAS,
            "tool_choice": "required",
            "model": name,
            **answer_limit(name, PROBE_TOKENS),
        }

    def _applied(self, name: str, probe: Probe) -> Probe:
        """What the probe found about tool_choice, applied (ASSISTANT_TOOL_MODE=auto)."""
        if self._tool_mode != "auto":
            return probe
        if probe.answered and probe.tool_call:
            self.limits.honours_tool_choice(name)
        elif probe.answered:
            self.limits.ask_in_json(name, IGNORED_TOOL_CHOICE)
        else:
            self.limits.recheck_failed(name)
        return probe

    async def _probe(self, name: str, body: dict[str, Any]) -> Probe:
        streamed = {**body, "stream": True, "stream_options": {"include_usage": True}}
        refused_stream = ""
        for ask in (streamed, body):
            try:
                async with asyncio.timeout(self._attempts.timeout):
                    async with self._request(ask, ask is streamed) as response:
                        kind = response.headers.get("content-type", "")
                        if kind.startswith("text/event-stream"):
                            assembler, sse = ReplyAssembler(), SseData(parse_chunks)
                            async for data in _reads(response):
                                assembler.feed(sse.feed(data), checked=True)
                            ended = assembler.end(0.0)[-1]
                            assert isinstance(ended, ReplyEnded)
                            reply = ended.reply
                        else:
                            reply = reply_of(parse_completion(await response.aread(), kind), 0.0)
            except openai.APIStatusError as exc:
                if refuses_model(exc, name):
                    return Probe(failed=what_failed(exc, "the server", "the model"), absent=True)
                if ask is streamed and refuses_streaming(exc):
                    refused_stream = what_failed(exc, "the server", "the model")
                    continue
                failed = what_failed(exc, "the server", "the model")
                return Probe(failed=failed, too_long=window_exceeded(exc) is not None)
            except openai.APIError as exc:
                return Probe(failed=what_failed(exc, "the server", "the model"))
            except TimeoutError:
                return Probe(failed=f"no answer in {self._attempts.timeout:g} s (OPENAI_TIMEOUT)")
            except NotACompletion as exc:
                return Probe(failed=f"the server answered with {exc}, not a chat completion")
            except Exception as exc:  # a broken stream: its name, never its text (a URL)
                return Probe(failed=type(exc).__name__)
            return Probe(
                answered=True,
                tool_call=bool(reply.calls),
                streamed=ask is streamed and kind.startswith("text/event-stream"),
                usage=reply.prompt_tokens is not None,
                refused_stream=refused_stream,
            )
        raise AssertionError("unreachable: the whole request returns")

    async def takes_images(self, model: str | None = None) -> bool | None:
        """Whether the server takes an image part for the model (a one-pixel PNG, an answer
        of one token); None when the call failed otherwise. A refusal is remembered."""
        name = self.asked(model)
        parts = [{"type": "image_url", "image_url": {"url": PROBE_IMAGE}}]
        body = {
            "messages": build_messages("Say ok.", parts),
            "model": name,
            **answer_limit(name, 1),
        }

        async def ask() -> bool | None:
            try:
                async with asyncio.timeout(self._attempts.timeout):
                    async with self._request(body, False):
                        return True
            except openai.APIStatusError as exc:
                if refuses_images(exc):
                    self.limits.refuse_images(name)
                    return False
                return None
            except Exception:  # unreachable, too slow: the probe says nothing
                return None

        return await self._on_own_loop(ask())

    def _named(self, reply: ModelReply, model: str | None) -> ModelReply:
        """The reply, its `model` the name the app asked for (what the log's metadata,
        `assistant usage` and reports show), unless the server named a version of it
        (OpenAI's `gpt-4o-mini-2024-07-18`): llama.cpp answers with its GGUF file's path.
        Telemetry's response model is what the server said."""
        asked = self.asked(model)
        if reply.model is not None and reply.model.startswith(asked):
            return reply
        return replace(reply, model=asked)

    def asked(self, model: str | None) -> str:
        """The model a call with `model` asks: the channel's, else ASSISTANT_MODEL."""
        return self._model if model is None else model

    def answer_cap(self, model: str | None = None) -> int:
        """The most tokens an answer of `model` (default the client's) may take."""
        name = self.asked(model)
        learned = self.limits.answer_tokens(name)
        return learned if learned is not None else self._answer_tokens

    def _model_args(self, model: str | None) -> dict[str, Any]:
        """The model and the answer's cap in the argument that model takes."""
        name = self.asked(model)
        learned = self.limits.answer_tokens(name)
        if learned is not None:
            return {"model": name, **answer_limit(name, learned)}
        if name == self._model:
            return {"model": self._model, **self._answer_limit}
        return {"model": name, **answer_limit(name, self._answer_tokens)}

    async def _next_step(
        self,
        prompt_text: str,
        images: Sequence[ImagePart],
        model: str | None = None,
        tools: Tools = TOOL_SCHEMAS,
    ) -> ModelReply:
        started = time.perf_counter()

        body = self._body(prompt_text, images, model, tools)
        in_json = "response_format" in body
        cut = _Cut(self._attempts.timeout)

        async def attempt() -> ModelReply:
            async with self._request(body, False) as response:
                # The body is read by then: the attempt's deadline covered all of it.
                completion = parse_completion(
                    response.content, response.headers.get("content-type", "")
                )
            reply = reply_of(completion, (time.perf_counter() - started) * 1000)
            return cut.said(calls_from_json(reply) if in_json else reply)

        return await self._run(attempt, model=body["model"], timed_out=cut.count)

    async def _run(
        self,
        attempt: Callable[[], Awaitable[T]],
        model: str,
        used: Callable[[], bool] = lambda: False,
        timed_out: Callable[[], None] = lambda: None,
    ) -> T:
        """The call's attempts; a model that refused images gets none from then on."""
        try:
            return await self._attempts.run(attempt, used=used, model=model, timed_out=timed_out)
        except ImagesRefused:
            self.limits.refuse_images(model)
            raise

    async def _stream_step(
        self,
        prompt_text: str,
        images: Sequence[ImagePart],
        emit: Callable[[list[StepEvent]], None],
        model: str | None = None,
        tools: Tools = TOOL_SCHEMAS,
    ) -> None:
        started = time.perf_counter()
        asked = self.asked(model)
        if not self.limits.streams(asked):
            emit(whole_events(await self._next_step(prompt_text, images, model, tools)))
            return
        sent = False  # whether events of the answer went out: then it is not retried
        cut = _Cut(self._attempts.timeout)

        def emit_said(events: list[StepEvent]) -> None:
            """The answer's events, after what the timeout cut before them (said once)."""
            nonlocal sent
            if not sent and cut.attempts:
                events = [TimedOut(cut.attempts, cut.seconds), *events]
            sent = True
            emit(events)

        async def attempt() -> bool:
            """One streamed request; False when the server refused to stream it."""
            nonlocal sent
            try:
                body = self._body(prompt_text, images, model, tools)
                in_json = "response_format" in body
                body |= {"stream": True, "stream_options": {"include_usage": True}}
                async with self._request(body, True) as response:
                    kind = response.headers.get("content-type", "")
                    if not kind.startswith("text/event-stream"):
                        # A server that ignores `stream` answers whole: so be it, from now on.
                        completion = parse_completion(await response.aread(), kind)
                        self.limits.stop_streaming(asked, "answered a streamed request whole")
                        reply = reply_of(completion, (time.perf_counter() - started) * 1000)
                        emit_said(whole_events(calls_from_json(reply) if in_json else reply))
                        return True
                    # The constrained mode's JSON is read as the tool call it is, as it comes.
                    assembler = JsonCallStream() if in_json else ReplyAssembler()
                    sse = SseData(parse_chunks)
                    # A read at a time, its chunks parsed and checked in one pass into plain
                    # dicts, their events handed on in one batch: per chunk, typed objects and
                    # a hand-off each cost a streamed answer several times the CPU of the
                    # whole answer.
                    async for data in _reads(response):
                        if batch := assembler.feed(sse.feed(data), checked=True):
                            emit_said(batch)
                        if error := sse.error:
                            request = response.request
                            raise openai.APIError(str(error), request, body=error.body)
                    if not assembler.finished:
                        what = "the model service's stream ended before its answer did"
                        raise AttemptFailed(what, retry=False)
                    emit_said(assembler.end((time.perf_counter() - started) * 1000))
                    return True
            except openai.APIStatusError as exc:
                if refuses_model(exc, asked) or not refuses_streaming(exc):
                    raise  # the model or the request, not the stream: for Attempts to say
                # Some servers refuse to stream an answer with tools: ask for it whole.
                said = server_said(exc)
                why = f"refused a streamed request (HTTP {exc.status_code}" + (
                    f": {said})" if said else ")"
                )
                self.limits.stop_streaming(asked, why)
                return False
            except openai.APIConnectionError:
                if sent:
                    what = "the model service's answer was cut off"
                    raise AttemptFailed(what, retry=False) from None
                raise

        if not await self._run(attempt, used=lambda: sent, model=asked, timed_out=cut.count):
            emit(whole_events(await self._next_step(prompt_text, images, model, tools)))

    def _body(
        self, prompt_text: str, images: Sequence[ImagePart], model: str | None, tools: Tools
    ) -> dict[str, Any]:
        name = self.asked(model)
        if images and not self.limits.takes_images(name):
            images = ()  # it said it takes none: the log's markers stand for them
        instructions = self._instructions or SYSTEM_MESSAGE
        asking: dict[str, Any] = {"tools": tools, "tool_choice": "required"}
        if self.in_json(name):
            instructions = json_instructions(instructions, tools)
            asking = {"response_format": response_format(tools)}
        return {
            "messages": build_messages(prompt_text, images, instructions),
            **asking,
            **self._model_args(model),
            **({"temperature": self._temperature} if self._temperature is not None else {}),
        }

    @contextlib.asynccontextmanager
    async def _request(self, body: dict[str, Any], stream: bool) -> AsyncIterator[httpx2.Response]:
        """A Chat Completions request, its body sent as it is: through the client's `post`
        (its documented way to send a body of our own), with its options, headers and
        errors, but not `create`'s walk of the body against the API's types, which is most
        of the client's CPU a call (bench/RESULTS.md) for a body that is plain JSON already.
        `stream`: the body is read as it comes (else before this returns)."""
        response = await self._client.post(
            "/chat/completions", cast_to=httpx2.Response, body=body, stream=stream
        )
        try:
            yield response
        finally:
            await response.aclose()

    async def _transcribe(self, name: str, data: bytes, mimetype: str) -> str:
        try:
            result = await self._transcriber.audio.transcriptions.create(
                model=self._transcription_model, file=(name, data, mimetype)
            )
        except (openai.APIStatusError, openai.APIConnectionError) as exc:
            raise TranscriptionError(what_failed(exc, "the service", "the service")) from None
        return result.text


class _Cut:
    """The attempts of one call the timeout cut (`Attempts.run`'s `timed_out`)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.attempts = 0

    def count(self) -> None:
        self.attempts += 1

    def said(self, reply: ModelReply) -> ModelReply:
        """The reply, carrying how many attempts before it were cut."""
        if not self.attempts:
            return reply
        return replace(reply, timeouts=self.attempts, timeout=self.seconds)


async def _reads(response: httpx2.Response) -> AsyncIterator[bytes]:
    """The body as it is read, its failures the client's errors (as its own stream reads it):
    a timeout, or a connection lost mid-answer."""
    request = response.request
    try:
        async for data in response.aiter_bytes():
            yield data
    except httpx2.TimeoutException as exc:
        raise openai.APITimeoutError(request) from exc
    except httpx2.RequestError as exc:
        raise openai.APIConnectionError(request=request) from exc
