"""How `FakeOpenAI` refuses what a real server refuses (`FakeOpenAI.server`): a prompt over its
context window, and images a text-only model cannot take, in the bodies and statuses of the
server it plays.

- `"openai"`: HTTP 400 `context_length_exceeded` ("This model's maximum context length is M
  tokens. However, your messages resulted in N tokens…"), and HTTP 400 "Invalid content type.
  image_url is only supported by certain models." for images.
- `"llama.cpp"` (`llama-server`, tools/server): HTTP 400 `{"error": {"code": 400, "message":
  "request (N tokens) exceeds the available context size (M tokens), try increasing it",
  "type": "exceed_context_size_error", "n_prompt_tokens": N, "n_ctx": M}}`, and HTTP 500
  `{"error": {"code": 500, "message": "image input is not supported - hint: if this is
  unexpected, you may need to provide the mmproj", "type": "server_error"}}`.
- `"ollama"`: it refuses no prompt (Ollama shortens one longer than its window itself); it
  tells `num_ctx` in `POST /api/show`'s `parameters` with `tells_window`.
- `"vllm"`: HTTP 400 `{"object": "error", "message": "This model's maximum context length is M
  tokens. However, you requested T tokens (N in the messages, C in the completion). Please
  reduce the length of the messages or completion.", "type": "BadRequestError", "param": null,
  "code": 400}`, where the completion's `max_tokens` counts against the window too. Its
  refusal of images is not played (no documented body found): it refuses them as OpenAI does.

Tool calls: with `tool_choice` "ignored" (llama.cpp's `llama-server` for many chat templates,
Ollama, whose compatibility page lists `tool_choice` unsupported) a scripted tool-call answer to
a request with tools comes as plain text (its `postMessage` text, else "Done."), as a model the
server does not hold to a tool call answers; `plain_text_hiccups` answers so the next few only
(a gateway's hiccup); every kind honours a `response_format` of type
`json_schema` (llama.cpp, vLLM and Ollama constrain the answer by a grammar): a scripted tool
call comes as one JSON object `{"toolCall": NAME, …arguments}`, one call an answer, the
script's other calls of the same answer kept for the next request.

The prompt's tokens, in a refusal and in the usage of every answer, are counted as the server
plays it: `chars_per_token` characters of the request's JSON each (a server's tokenizer may
count more than the app's estimate), or, with `chars_per_token` None, by `tokenizer` over the
messages' texts and the tools' JSON with OpenAI's framing of 3 tokens a message and 3 for the
answer (the tests give it the app's exact counter for OpenAI's models, as OpenAI counts).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Literal

from aiohttp import web

from assistant.fakes.openai.responses import Completion

ServerKind = Literal["openai", "llama.cpp", "vllm", "ollama"]

LLAMA_NO_IMAGES = (
    "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"
)
OPENAI_NO_IMAGES = "Invalid content type. image_url is only supported by certain models."


@dataclass
class ServerRefusals:
    """What the fake refuses, as `kind` would: prompts over `context_tokens` (None: any
    length), image parts unless `images`."""

    kind: ServerKind = "openai"
    context_tokens: int | None = None
    images: bool = True
    chars_per_token: float | None = 4.0
    tokenizer: Callable[[str], int] | None = None  # with chars_per_token None
    tells_window: bool = False  # whether /props (llama.cpp) or /v1/models (vLLM) names it
    served: tuple[str, ...] = ("gpt-4o-mini",)  # the models vLLM's /v1/models lists
    window_questions: int = 0  # requests to /props and /v1/models, answered or not
    tool_choice: Literal["honoured", "ignored"] = "honoured"
    # A server (or a gateway before it) that honours tool_choice but answers this many of the
    # next requests with tools in plain text all the same: a hiccup, not a habit.
    plain_text_hiccups: int = 0
    # Every chat completion answered with this HTTP status and an HTML page (a proxy, or a
    # server without OpenAI's endpoint: `python -m http.server` answers POST so, with 501).
    chat_page: int | None = None
    # llama.cpp's /props beside the window: whether the chat template takes tools
    # (`chat_template_caps.supports_tools`; None: a server too old to say) and its own cap
    # on an answer (`-n`, `params.n_predict`; -1: none); `props_window` False: /props names
    # no n_ctx, which /slots then tells (one entry a slot).
    template_tools: bool | None = None
    # The model its answers name (None: the one asked): llama.cpp's is its GGUF file's path
    # (its --alias, by default), OpenAI's a dated snapshot of the name asked.
    answers_as: str | None = None
    n_predict: int = -1
    props_window: bool = True

    def routes(self) -> list[web.RouteDef]:
        """Where the server tells its window: llama.cpp's `GET /props`, vLLM's `GET
        /v1/models`, Ollama's `POST /api/show` (each only for its kind, and only with
        `tells_window`)."""
        return [
            web.get("/props", self._props),
            web.get("/v1/models", self._models),
            web.post("/api/show", self._show),
            web.get("/slots", self._slots),
        ]

    async def _show(self, request: web.Request) -> web.Response:
        self.window_questions += 1
        if self.kind != "ollama":
            return web.json_response({"detail": "Not Found"}, status=404)
        # Ollama's answer: the Modelfile's parameters as text, num_ctx among them when set.
        parameters = "temperature 0.7"
        if self.tells_window and self.context_tokens is not None:
            parameters += f"\nnum_ctx {self.context_tokens}"
        info = {"general.architecture": "qwen2", "qwen2.context_length": 32768}
        return web.json_response(
            {"parameters": parameters, "model_info": info, "capabilities": ["completion", "tools"]}
        )

    async def _props(self, request: web.Request) -> web.Response:
        self.window_questions += 1
        if self.kind != "llama.cpp" or not self.tells_window or self.context_tokens is None:
            return web.json_response({"detail": "Not Found"}, status=404)
        settings: dict[str, Any] = {"params": {"n_predict": self.n_predict}}
        if self.props_window:
            settings["n_ctx"] = self.context_tokens
        props: dict[str, Any] = {"default_generation_settings": settings, "total_slots": 2}
        if self.template_tools is not None:
            caps = {
                "supports_tools": self.template_tools,
                "supports_tool_calls": self.template_tools,
                "supports_system_role": True,
            }
            props["chat_template_caps"] = caps
        return web.json_response(props)

    async def _slots(self, request: web.Request) -> web.Response:
        self.window_questions += 1
        if self.kind != "llama.cpp" or not self.tells_window or self.context_tokens is None:
            return web.json_response({"detail": "Not Found"}, status=404)
        slot = {"n_ctx": self.context_tokens, "speculative": False, "is_processing": False}
        return web.json_response([{"id": n, **slot} for n in range(2)])

    async def _models(self, request: web.Request) -> web.Response:
        self.window_questions += 1
        if self.kind != "vllm" or not self.tells_window or self.context_tokens is None:
            return web.json_response({"detail": "Not Found"}, status=404)
        served = [
            {
                "id": name,
                "object": "model",
                "owned_by": "vllm",
                "max_model_len": self.context_tokens,
            }
            for name in self.served
        ]
        return web.json_response({"object": "list", "data": served})

    def refusal(self, body: dict[str, Any]) -> web.Response | None:
        """The refusal of a request (its parsed body), or None when it is served."""
        if self.chat_page is not None:
            return _page(self.chat_page)
        if not self.images and _has_images(body):
            return self._no_images()
        if self.context_tokens is None or self.kind == "ollama":
            return None
        prompt = self.prompt_tokens(body)
        answer = body.get("max_tokens") or body.get("max_completion_tokens") or 0
        counted = prompt + answer if self.kind == "vllm" else prompt
        if counted <= self.context_tokens:
            return None
        return self._too_long(prompt, answer)

    def answer(
        self, response: Completion, body: dict[str, Any]
    ) -> tuple[Completion, Completion | None]:
        """What the server answers for a scripted completion, as it treats tool_choice and
        response_format; and what is left of it for the next request (None: nothing)."""
        message = response.message or {}
        calls = message.get("tool_calls") or []
        if calls and (body.get("response_format") or {}).get("type") == "json_schema":
            function = calls[0]["function"]
            arguments = _arguments(function["arguments"])
            content = function["arguments"]  # malformed arguments: as they are
            if arguments is not None:
                content = json.dumps({"toolCall": function["name"], **arguments})
            left = None
            if calls[1:]:
                left = Completion({**message, "tool_calls": calls[1:]}, response.finish_reason)
            return _prose(content, response.usage), left
        hiccup = self.plain_text_hiccups > 0 and bool(body.get("tools"))
        if calls and hiccup:
            self.plain_text_hiccups -= 1
        if calls and (self.tool_choice == "ignored" or hiccup) and body.get("tools"):
            posts = [
                _arguments(c["function"]["arguments"])
                for c in calls
                if c["function"]["name"] == "postMessage"
            ]
            said = next((p["text"] for p in posts if p and isinstance(p.get("text"), str)), None)
            return _prose(said or "Done.", response.usage), None
        return response, None

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        """The request's prompt tokens as this server counts them (at least 1)."""
        tools, messages = body.get("tools"), body.get("messages") or []
        if self.chars_per_token is not None or self.tokenizer is None:
            shown = json.dumps([tools, messages], ensure_ascii=False)
            return max(1, int(len(shown) / (self.chars_per_token or 4.0)))
        count = self.tokenizer
        texts = [json.dumps(tools, ensure_ascii=False, separators=(",", ":"))] if tools else []
        for message in messages:
            content = message.get("content") if isinstance(message, dict) else None
            parts = content if isinstance(content, list) else [{"text": content}]
            texts += [
                p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
        return max(1, sum(count(text) for text in texts) + 3 * len(messages) + 3)

    def _too_long(self, prompt: int, answer: int) -> web.Response:
        window = self.context_tokens
        if self.kind == "llama.cpp":
            message = (
                f"request ({prompt} tokens) exceeds the available context size ({window} "
                "tokens), try increasing it"
            )
            error = {"code": 400, "message": message, "type": "exceed_context_size_error"}
            body: dict[str, Any] = {"error": error | {"n_prompt_tokens": prompt, "n_ctx": window}}
        elif self.kind == "vllm":
            message = (
                f"This model's maximum context length is {window} tokens. However, you "
                f"requested {prompt + answer} tokens ({prompt} in the messages, {answer} in the "
                "completion). Please reduce the length of the messages or completion."
            )
            body = {"object": "error", "message": message, "type": "BadRequestError"}
            body |= {"param": None, "code": 400}
        else:
            message = (
                f"This model's maximum context length is {window} tokens. However, your "
                f"messages resulted in {prompt} tokens. Please reduce the length of the messages."
            )
            body = {"error": {"message": message, "type": "invalid_request_error"}}
            body["error"] |= {"param": "messages", "code": "context_length_exceeded"}
        return web.json_response(body, status=400)

    def _no_images(self) -> web.Response:
        if self.kind == "llama.cpp":
            error = {"code": 500, "message": LLAMA_NO_IMAGES, "type": "server_error"}
            return web.json_response({"error": error}, status=500)
        error = {"message": OPENAI_NO_IMAGES, "type": "invalid_request_error"}
        error |= {"param": "messages", "code": None}
        return web.json_response({"error": error}, status=400)


def _arguments(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _prose(content: str, usage: dict[str, Any] | None) -> Completion:
    return Completion({"role": "assistant", "content": content, "refusal": None}, "stop", usage)


def _page(status: int) -> web.Response:
    """An error page as Python's http.server writes one (on one line it is unreadable)."""
    phrase = HTTPStatus(status).phrase
    page = (
        '<!DOCTYPE HTML>\n<html lang="en">\n    <head>\n        <meta charset="utf-8">\n'
        f"        <title>Error response</title>\n    </head>\n    <body>\n"
        f"        <h1>Error response</h1>\n        <p>Error code: {status}</p>\n"
        f"        <p>Message: Unsupported method ('POST').</p>\n"
        f"        <p>Error code explanation: {status} - {phrase}.</p>\n    </body>\n</html>\n"
    )
    return web.Response(text=page, status=status, content_type="text/html")


def _has_images(body: dict[str, Any]) -> bool:
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(part, dict) and part.get("type") == "image_url" for part in content
        ):
            return True
    return False
