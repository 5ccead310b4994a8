"""The model servers people run (issue 35): their error bodies reach the log and the console,
a refusal changes how later calls are made only when it is about streaming or tools (and only
for that model), a prompt over the server's window is cut to it and asked again, and a model
that refuses images is asked without them. The app runs over HTTP against the fake model
playing OpenAI, llama.cpp or vLLM (assistant/fakes/openai/servers.py)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.responses import Error, Raw
from assistant.model.client import PROBE_TOKENS, ModelClient
from assistant.model.json_mode import JSON_MODE_NOTE
from assistant.model.limits import JSON_RECHECK_SECONDS, PLAIN_TEXT_SWITCH
from assistant.model.options import ModelOptions
from assistant.run.loop.apologies import SORRY_MODEL, SORRY_WINDOW
from context.tokens import counter_for
from tests.app.test_streaming import answer_streaming
from tests.harness import answered_log, prompt_log, script_answers, thread_of
from tests.harness import mention as say

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = pytest.mark.listeners

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(200)
MODEL = "gpt-4o-mini"  # the tests' ASSISTANT_MODEL


def system_texts(log: list[dict]) -> list[str]:
    return [e["content"] for e in log if e["role"] == "system"][1:]


def has_images(request: dict) -> bool:
    return not isinstance(request["messages"][1]["content"], str)


@pytest.mark.parametrize("stream", ["off", "auto"])
def test_the_server_s_error_reaches_the_log_and_the_console_without_secrets(
    make_app, slack, model, caplog, stream
):
    app = make_app(assistant_stream=stream)
    caplog.set_level(logging.WARNING)
    secret = "sk-proj-" + "a1B2c3D4e5" * 4
    message = (
        f"Invalid value for 'max_tokens' with key {secret}\nsee "
        "https://admin:hunter2@models.internal:8443/v1/help?token=t0ps3cret"
    )
    model.script(Error(400, message, "invalid_request_error", "invalid_value"))
    log = answered_log(app, slack, say(slack, "hello"))
    said = (
        "the model service answered HTTP 400: Invalid value for 'max_tokens' with key [secret] "
        "see https://models.internal:8443 (invalid_request_error, invalid_value)"
    )
    assert system_texts(log) == [
        f'Error: the model call failed: {said}. The user was told: "{SORRY_MODEL.english()}"'
    ]
    assert said in caplog.text
    assert secret not in caplog.text and "hunter2" not in caplog.text
    assert "t0ps3cret" not in caplog.text
    assert len(model.requests) == 1  # a 400 is not retried, nor asked again whole


@pytest.mark.parametrize(
    ("body", "said"),
    [
        pytest.param(
            b'{"object": "error", "message": "temperature must be non-negative, got -1.0.", '
            b'"type": "BadRequestError", "param": null, "code": 400}',
            "temperature must be non-negative, got -1.0. (BadRequestError, 400)",
            id="vllm",
        ),
        pytest.param(
            b'{"error": {"message": "json: cannot unmarshal number into Go struct field", '
            b'"type": "invalid_request_error", "param": null, "code": null}}',
            "json: cannot unmarshal number into Go struct field (invalid_request_error)",
            id="ollama",
        ),
        pytest.param(b"Bad Request\n\x1b[31m", "Bad Request", id="text"),
        pytest.param(b"", None, id="empty"),
    ],
)
def test_each_server_s_error_shape_is_read(make_app, slack, model, body, said):
    app = make_app()
    model.script(Raw(body, "application/json", status=400))
    log = answered_log(app, slack, say(slack, "hello"))
    what = "the model service answered HTTP 400" + (f": {said}" if said else "")
    assert system_texts(log) == [
        f'Error: the model call failed: {what}. The user was told: "{SORRY_MODEL.english()}"'
    ]


def test_a_refusal_that_is_not_about_streaming_leaves_streaming_on(make_app, slack, model):
    app = make_app(assistant_stream="auto")
    model.script(Error(400, "Invalid value for 'temperature'", "invalid_request_error"))
    answered_log(app, slack, say(slack, "hello"))
    script_answers(model)
    answered_log(app, slack, say(slack, "and now?"))
    assert [r.get("stream", False) for r in model.requests] == [True, True]
    assert app.assistant.model.limits.streams(MODEL)


def test_a_server_error_refusing_streamed_tools_means_whole_answers(make_app, slack, model):
    """llama.cpp's server before it streamed tool calls: HTTP 500 "Cannot use tools with
    stream" (simonw/llm-llama-server#3): asked again whole at once, not retried streamed."""
    app = make_app(assistant_stream="auto")
    message = "Cannot use tools with stream"
    model.script(Raw(b'{"error": {"code": 500, "message": "%s", "type": "server_error"}}'
                     % message.encode(), status=500))  # fmt: skip
    script_answers(model)
    log = answered_log(app, slack, say(slack, "hello"))
    assert system_texts(log) == []
    assert [r.get("stream", False) for r in model.requests] == [True, False]
    assert not app.assistant.model.limits.streams(MODEL)


def test_a_refusal_to_stream_changes_only_that_model_s_calls(model):
    """The client asks `refusing` for whole answers once it refused a stream; `other`, on the
    same server, is still streamed."""
    options = ModelOptions("key", model.base_url, 10, 0, "refusing", "whisper-1", 500)

    async def ask(client: ModelClient, name: str) -> None:
        async for _ in client.stream_step("[]", model=name):
            pass

    async def scenario() -> None:
        client = ModelClient(options)
        try:
            model.streaming.mode = "refused"
            model.script(replies.finish_request())
            await ask(client, "refusing")
            model.streaming.mode = "sse"
            model.script(replies.finish_request(), replies.finish_request())
            await ask(client, "other")
            await ask(client, "refusing")
        finally:
            await client.close()

    asyncio.run(scenario())
    asked = [(r["model"], r.get("stream", False)) for r in model.requests]
    assert asked == [("refusing", True), ("refusing", False), ("other", True), ("refusing", False)]


LONG = "word " * 3_000  # 15,000 characters: the prompt's log is cut to its head when pruned


@pytest.mark.parametrize("kind", ["llama.cpp", "vllm", "openai"])
@pytest.mark.parametrize("stream", ["off", "auto"])
def test_a_prompt_over_the_server_s_window_is_cut_to_it_and_asked_again(
    make_app, slack, model, caplog, kind, stream
):
    app = make_app(assistant_stream=stream, assistant_answer_tokens=500)
    caplog.set_level(logging.WARNING)
    # The fake counts 3 characters a token, more than the app's estimate: the first cut to the
    # window alone would not fit; the server's own count of the prompt says by how much.
    model.server.kind, model.server.chars_per_token = kind, 3.0
    model.server.context_tokens = 4_000
    script_answers(model, 2)
    first = answered_log(app, slack, say(slack, LONG))
    assert system_texts(first) == []
    assert [e["content"].get("toolCall") for e in first[2:]] == ["postMessage", "finishRequest"]
    refused, retried = model.requests[:2]
    assert "expandEntry" not in prompt_log(refused)[1]["content"]["text"]  # whole
    assert "expandEntry" in prompt_log(retried)[1]["content"]["text"]  # cut to fit
    assert len(model.requests) == 2
    # The window is remembered: the next long thread's first prompt fits at once.
    answered_log(app, slack, say(slack, LONG))
    assert len(model.requests) == 3
    warnings = [r.getMessage() for r in caplog.records if "context window" in r.getMessage()]
    assert len(warnings) == 1 and "4000 tokens" in warnings[0]


def test_a_window_too_small_for_the_answer_s_reserve_ends_the_run_saying_so(make_app, slack, model):
    app = make_app(assistant_answer_tokens=500)
    model.server.kind, model.server.context_tokens = "llama.cpp", 2_400
    model.server.chars_per_token = 1.0  # the server counts four times what the app estimates
    log = answered_log(app, slack, say(slack, LONG))
    (error,) = system_texts(log)
    assert error.startswith(
        "Error: the prompt does not fit the context budget: the model server's context window "
        "of 2400 tokens leaves no room for the log after the "
    )
    # What would help: no new thread would fit either (issue 49).
    assert error.endswith(f'The user was told: "{SORRY_WINDOW.english()}"')
    assert "start a new thread" not in SORRY_WINDOW.english()
    assert len(model.requests) == 1


def test_a_prompt_refused_again_after_the_cut_fails_with_the_server_s_words(make_app, slack, model):
    app = make_app()
    said = "This model's maximum context length is 128000 tokens."  # and no count of the prompt
    model.script(*[Error(400, said, "invalid_request_error", "context_length_exceeded")] * 2)
    log = answered_log(app, slack, say(slack, "hello"))
    kind = "(invalid_request_error, context_length_exceeded)"
    what = f"the model service answered HTTP 400: {said} {kind}"
    assert system_texts(log) == [
        f'Error: the model call failed: {what}. The user was told: "{SORRY_MODEL.english()}"'
    ]
    assert len(model.requests) == 2  # asked again once


@pytest.mark.parametrize("kind", ["llama.cpp", "openai"])
@pytest.mark.parametrize("stream", ["off", "auto"])
def test_a_model_that_refuses_images_is_asked_without_them_from_then_on(
    make_app, slack, model, kind, stream
):
    app = make_app(assistant_stream=stream)
    model.server.kind, model.server.images = kind, False
    script_answers(model, 2)
    png = slack.add_file("screenshot.png", "image/png", PNG)
    log = answered_log(app, slack, say(slack, "what is wrong here?", files=[png]))
    assert [has_images(r) for r in model.requests] == [True, False]
    (note,) = system_texts(log)
    assert note.startswith(f"The model '{MODEL}' refused the thread's images (")
    assert "image" in note and "asked without images from now on" in note
    assert [e["content"].get("toolCall") for e in log[3:]] == ["postMessage", "finishRequest"]
    png2 = slack.add_file("other.png", "image/png", PNG)
    log2 = answered_log(app, slack, say(slack, "and this one?", files=[png2]))
    assert [has_images(r) for r in model.requests[2:]] == [False]
    assert system_texts(log2) == []


@pytest.mark.parametrize("kind", ["llama.cpp", "vllm", "ollama"])
def test_the_window_a_server_tells_is_read_before_the_first_prompt(make_app, slack, model, kind):
    app = make_app(assistant_answer_tokens=500)
    model.server.kind, model.server.chars_per_token = kind, 4.0
    model.server.context_tokens, model.server.tells_window = 4_000, True
    script_answers(model)
    log = answered_log(app, slack, say(slack, LONG))
    assert system_texts(log) == []
    (request,) = model.requests  # never refused: cut to the window from the first prompt
    assert "expandEntry" in prompt_log(request)[1]["content"]["text"]


@pytest.mark.parametrize("stream", ["off", "auto"])
def test_the_answer_s_cap_is_learned_from_the_window_unless_set(make_app, slack, model, stream):
    """Issue 49: without ASSISTANT_ANSWER_TOKENS a server telling a window of 8,192 tokens
    gets answers capped at an eighth of it, and the prompt keeps only that much for the
    answer: a message the default's reserve would cut is shown whole."""
    model.server.kind, model.server.tells_window = "llama.cpp", True
    model.server.context_tokens = 8_192
    message = "word " * 4_000  # about 4,000 tokens: under 8,192 - 1,024 - the fixed part
    for answer_tokens in (None, 4_000):
        settings = {} if answer_tokens is None else {"assistant_answer_tokens": answer_tokens}
        app = make_app(assistant_stream=stream, **settings)
        script_answers(model)
        log = answered_log(app, slack, say(slack, message))
        assert system_texts(log) == []
        app.stop()
    learned, configured = model.requests
    assert (learned["max_tokens"], configured["max_tokens"]) == (1_024, 4_000)
    assert "expandEntry" not in prompt_log(learned)[1]["content"]["text"]  # whole
    assert "expandEntry" in prompt_log(configured)[1]["content"]["text"]  # cut to fit


def test_a_server_that_tells_no_window_is_asked_once_and_nothing_fails(make_app, slack, model):
    app = make_app()
    script_answers(model, 2)
    answered_log(app, slack, say(slack, "hello"))
    answered_log(app, slack, say(slack, "again"))
    assert len(model.requests) == 2
    # /props, /v1/models, then /api/show, for the one model
    assert model.server.window_questions == 3
    assert app.assistant.model.limits.window(MODEL) is None  # nor counts more than the estimate


@pytest.mark.parametrize("stream", ["off", "auto"])
def test_the_token_estimate_is_calibrated_by_the_server_s_count(make_app, slack, model, stream):
    app = make_app(assistant_stream=stream, assistant_answer_tokens=500)
    exact = counter_for(MODEL).count
    # The server's tokenizer counts a fifth more than the app's estimate; it tells its window.
    model.server.kind, model.server.tells_window = "llama.cpp", True
    model.server.context_tokens, window = 4_000, 4_000
    model.server.tokenizer = lambda text: exact(text) * 6 // 5
    script_answers(model, 2)
    answered_log(app, slack, say(slack, "hello"))  # its usage teaches the server's count
    scale = app.assistant.model.limits.window(MODEL).scale
    assert 1.1 < scale < 1.25
    # A message the estimate fits whole in the window, which the server counts past it.
    budget = app.settings.model.prompt_budget()
    words = window - budget.answer - budget.fixed - 200
    log = answered_log(app, slack, say(slack, "word " * words))
    assert system_texts(log) == []  # never refused: the prompt was cut to the server's count
    assert len(model.requests) == 2
    assert "expandEntry" in prompt_log(model.requests[1])[1]["content"]["text"]
    assert model.server.prompt_tokens(model.requests[1]) <= window


def tool_calls_of(log: list[dict]) -> list[dict]:
    return [e["content"] for e in log if e["role"] == "assistant"]


def answer(text: str) -> replies.Completion:
    return replies.tool_calls(
        ("postMessage", {"text": text, "reasoning": "answer"}),
        ("finishRequest", {"reasoning": "done"}),
    )


@pytest.mark.parametrize("stream", ["off", "auto"])
def test_a_server_that_ignores_tool_choice_is_asked_for_json_from_then_on(
    make_app, slack, model, caplog, stream
):
    """Three replies in plain text in a row are a habit (issue 43): the model is asked in the
    constrained mode from then on, streamed where the server streams."""
    app = make_app(assistant_stream=stream)
    caplog.set_level(logging.WARNING)
    model.server.kind, model.server.tool_choice = "llama.cpp", "ignored"
    model.script(*[answer(f"Reply {n}.") for n in range(PLAIN_TEXT_SWITCH)], answer("Still here."))
    for n in range(PLAIN_TEXT_SWITCH):
        first = answered_log(app, slack, say(slack, f"hello {n}"))
        # The plain text is still the answer, and the log says how it came.
        assert system_texts(first)[0].startswith("The model answered in plain text")
        assert [c.get("text") for c in tool_calls_of(first)] == [f"Reply {n}.", None]
    assert all("tools" in r for r in model.requests)
    second = answered_log(app, slack, say(slack, "are you there?"))
    assert system_texts(second) == []
    assert [(c["toolCall"], c.get("text")) for c in tool_calls_of(second)] == [
        ("postMessage", "Still here."),
        ("finishRequest", None),
    ]
    asked = model.requests[PLAIN_TEXT_SWITCH:]
    assert len(asked) == 2  # one call an answer in this mode
    for request in asked:
        assert "tools" not in request and "tool_choice" not in request
        assert request.get("stream", False) is (stream == "auto")
        assert request["response_format"]["type"] == "json_schema"
        assert JSON_MODE_NOTE in request["messages"][0]["content"]
    said = [r.getMessage() for r in caplog.records if "as JSON" in r.getMessage()]
    assert len(said) == 1 and MODEL in said[0] and f"{PLAIN_TEXT_SWITCH} times in a row" in said[0]


@pytest.mark.parametrize("stream", ["off", "auto"])
def test_plain_text_hiccups_switch_nothing(make_app, slack, model, stream):
    """A gateway's hiccup (issue 43): replies in plain text fewer than PLAIN_TEXT_SWITCH in a
    row, a tool call between them, and every later request still goes out with tools (and
    streamed, where it was)."""
    app = make_app(assistant_stream=stream)
    hiccups = PLAIN_TEXT_SWITCH - 1
    model.server.kind, model.server.plain_text_hiccups = "llama.cpp", hiccups
    model.script(*[answer(f"Reply {n}.") for n in range(hiccups * 2 + 1)])
    for n in range(hiccups * 2 + 1):
        if n == hiccups + 1:
            model.server.plain_text_hiccups = hiccups
        log = answered_log(app, slack, say(slack, f"hello {n}"))
        plain = n != hiccups
        assert system_texts(log)[:1] == (
            ["The model answered in plain text instead of calling a tool; the text was posted "
             "with postMessage and the request finished."] if plain else []
        )  # fmt: skip
    assert all(r["tool_choice"] == "required" for r in model.requests)
    assert all("response_format" not in r for r in model.requests)
    assert all(r.get("stream", False) is (stream == "auto") for r in model.requests)
    assert not app.assistant.model.in_json(MODEL)


def test_a_model_asked_as_json_is_probed_again_after_a_while(model):
    """The constrained mode is looked at again JSON_RECHECK_SECONDS after the evidence, by a
    probe in the background: a server that now honours tool_choice gets tools again, one that
    still does not stays asked as JSON (and is probed again only after as long again)."""
    options = ModelOptions("key", model.base_url, 10, 0, MODEL, "whisper-1", 500)
    model.server.tool_choice = "ignored"
    model.default = replies.finish_request()
    now = [1000.0]
    steps: list[list[str]] = []  # each step's requests: the probe's may come before its own

    def kind(request: dict) -> str:
        if request.get("max_tokens") == PROBE_TOKENS:
            return "probe"
        return "json" if "response_format" in request else "tools"

    async def step(client: ModelClient) -> bool:
        before = len(model.requests)
        await client.next_step("[]")
        await client.settled()
        steps.append(sorted(kind(r) for r in model.requests[before:]))
        return client.in_json(MODEL)

    async def scenario() -> list[bool]:
        client = ModelClient(options)
        client.limits.clock = lambda: now[0]
        modes = []
        try:
            await client.probe()  # the start's probe: plain text
            modes.append(await step(client))
            now[0] += JSON_RECHECK_SECONDS
            modes.append(await step(client))  # as JSON; probed again: still plain text
            modes.append(await step(client))  # not probed again so soon
            model.server.tool_choice = "honoured"
            now[0] += JSON_RECHECK_SECONDS
            modes.append(await step(client))  # as JSON; the probe gets a tool call
            modes.append(await step(client))
        finally:
            await client.close()
        return modes

    assert asyncio.run(scenario()) == [True, True, True, False, False]
    assert steps == [["json"], ["json", "probe"], ["json"], ["json", "probe"], ["tools"]]


def test_the_constrained_mode_streams_a_post_into_slack_as_it_is_written(make_app, slack, model):
    """Asked as JSON, a server that streams streams the answer (issue 43): the JSON is read as
    the tool call it is while it arrives, and the post's text shows in Slack meanwhile."""
    app = make_app(assistant_stream="auto", assistant_tool_mode="json")
    text = "A thread is a conversation under one message, kept together. " * 3
    event = say(slack, "what is a thread?")
    log = answer_streaming(app, slack, model, event, answer(text), after=(20,))  # in the text
    assert [(c["toolCall"], c.get("text")) for c in tool_calls_of(log)] == [
        ("postMessage", text),
        ("finishRequest", None),
    ]
    assert all(r["stream"] is True and "response_format" in r for r in model.requests)
    (start,) = slack.calls_to("chat.startStream")
    stopped = slack.calls_to("chat.stopStream")[-1]
    assert stopped.params["channel"] == start.params["channel"]
    assert system_texts(log) == []


@pytest.mark.parametrize("stream", ["off", "auto"])
@pytest.mark.parametrize(
    ("answers_as", "recorded"),
    [
        ("/models/SmolLM2-135M-Instruct.Q4_1.gguf", MODEL),  # llama.cpp: the file's path
        (f"{MODEL}-2024-07-18", f"{MODEL}-2024-07-18"),  # OpenAI: a snapshot of the name
    ],
)
def test_the_metadata_names_the_model_asked_not_the_server_s_file(
    make_app, slack, model, stream, answers_as, recorded
):
    """Issue 49: what `assistant usage` and reports show is the configured name."""
    app = make_app(assistant_stream=stream)
    model.server.answers_as = answers_as
    script_answers(model)
    event = say(slack, "hello")
    answered_log(app, slack, event)
    metas = app.assistant.store.metadata(thread_of(event))
    assert [m.model for m in metas if m.latency_ms is not None] == [recorded]


def test_the_log_is_the_same_in_both_modes(make_app, slack, model):
    script = [
        replies.tool_calls(("getThreadHistory", {"limit": 5, "reasoning": "look back"})),
        answer("Found it."),
    ]
    logs = []
    for mode in ("tools", "json"):
        app = make_app(assistant_tool_mode=mode)
        model.script(*script)
        logs.append(tool_calls_of(answered_log(app, slack, say(slack, "what did I say?"))))
        app.stop()
    assert logs[0] == logs[1]
    assert [c["toolCall"] for c in logs[1]] == ["getThreadHistory", "postMessage", "finishRequest"]
    assert all("response_format" in r for r in model.requests[2:])
    assert not any("response_format" in r for r in model.requests[:2])


def test_the_tools_setting_keeps_tool_calls_whatever_the_server_answers(make_app, slack, model):
    app = make_app(assistant_tool_mode="tools")
    model.server.tool_choice = "ignored"
    model.script(answer("One."), answer("Two."))
    answered_log(app, slack, say(slack, "hello"))
    answered_log(app, slack, say(slack, "again"))
    assert all(r["tool_choice"] == "required" for r in model.requests)
    assert not app.assistant.model.in_json(MODEL)


def test_a_reply_in_json_that_names_no_tool_is_an_error_the_model_reads(make_app, slack, model):
    app = make_app(assistant_tool_mode="json")
    model.script(
        replies.text('{"toolCall": "postMessage", "text": "cut sh'),  # its cap reached
        answer("Whole this time."),
    )
    log = answered_log(app, slack, say(slack, "hello"))
    # The call it was making is named (not "unknown tool ''"): SmolLM2 on llama-server cut
    # a call at its cap so (tests/real_model).
    (error,) = system_texts(log)
    # Where it broke (issue 49): the string that starts at character 36 runs to the end.
    assert error == (
        "Error: the arguments of postMessage are not valid JSON (Unterminated string starting "
        "at character 36 of 43)"
    )
    assert [c.get("text") for c in tool_calls_of(log)] == ["Whole this time.", None]


def test_a_reply_in_json_that_names_no_tool_at_its_start_is_an_unknown_tool(make_app, slack, model):
    app = make_app(assistant_tool_mode="json")
    model.script(replies.text('{"text": "no name'), answer("Named this time."))
    log = answered_log(app, slack, say(slack, "hello"))
    (error,) = system_texts(log)
    assert error.startswith("Error: unknown tool ''")
