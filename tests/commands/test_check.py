"""`assistant check` against the fake model playing OpenAI, llama.cpp and vLLM: one line a
finding, what to set when it is wrong, the exit status; `serve` prints its summary at start
and applies what it found (issue 35)."""

from __future__ import annotations

import pytest

from assistant.fakes import FakeOpenAI, ids
from assistant.fakes.openai import responses as replies
from assistant.run.core.prompt import fixed_tokens
from context.channels import ChannelConfig
from context.storage import open_store
from context.tokens import counter_for
from tests.process import clean_env, run_assistant

MODEL = "qwen2.5-7b-instruct"


def fake(**server: object) -> FakeOpenAI:
    model = FakeOpenAI(default=replies.finish_request())
    for name, value in server.items():
        setattr(model.server, name, value)
    return model


def env_for(model: FakeOpenAI | None, tmp_path, **more: str) -> dict[str, str]:
    more.setdefault("OPENAI_BASE_URL", model.base_url if model is not None else "")
    return clean_env(
        OPENAI_API_KEY=ids.OPENAI_API_KEY,
        OPENAI_MAX_RETRIES="0",
        ASSISTANT_MODEL=MODEL,
        ASSISTANT_STREAM="auto",
        DATABASE_URL=f"sqlite:///{tmp_path / 'assistant.db'}",
        **more,
    )


def lines_of(stdout: str) -> dict[str, str]:
    """check -> its whole line (one model)."""
    return {
        what: line for line in stdout.splitlines()[1:] for what in CHECKS if f" {what} " in line
    }


CHECKS = ("reachable", "model present", "tool calls", "streaming with usage", "images", "window")


def test_a_server_that_does_everything_passes(tmp_path):
    with fake(kind="vllm", tells_window=True, context_tokens=200_000, served=(MODEL,)) as model:
        result = run_assistant("check", env=env_for(model, tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = lines_of(result.stdout)
    assert set(found) == set(CHECKS)
    assert all(" ok " in line for line in found.values()), result.stdout
    assert "200000 tokens" in found["window"]
    assert "all well for qwen2.5-7b-instruct" in result.stderr
    assert not (tmp_path / "assistant.db").exists()  # no store made for it


def test_a_llama_server_without_tools_or_images_says_what_to_set(tmp_path):
    server = {"kind": "llama.cpp", "tool_choice": "ignored", "images": False,
              "tells_window": True, "context_tokens": 8_192}  # fmt: skip
    with fake(**server) as model:
        result = run_assistant("check", env=env_for(model, tmp_path), cwd=tmp_path)
        asked = model.requests
    assert result.returncode == 0, result.stderr  # warnings: the app copes with each
    found = lines_of(result.stdout)
    assert " warn " in found["tool calls"] and "asked as JSON from now on" in found["tool calls"]
    assert "ASSISTANT_TOOL_MODE=json" in found["tool calls"]
    assert " warn " in found["images"] and "ASSISTANT_MAX_IMAGES=0" in found["images"]
    assert "8192 tokens" in found["window"] and "ASSISTANT_CONTEXT_TOKENS=7372" in found["window"]
    assert " ok " in found["streaming with usage"]
    assert asked[0]["tool_choice"] == "required" and asked[0]["stream"] is True
    assert "0 failing, 3 to look at" in result.stderr


def test_tool_calls_that_will_not_come_fail_the_check(tmp_path):
    with fake(kind="llama.cpp", tool_choice="ignored") as model:
        env = env_for(model, tmp_path, ASSISTANT_TOOL_MODE="tools")
        result = run_assistant("check", env=env, cwd=tmp_path)
    assert result.returncode == 1
    line = lines_of(result.stdout)["tool calls"]
    assert " FAIL " in line and "ASSISTANT_TOOL_MODE=auto" in line


def test_an_unreachable_server_and_a_missing_model_fail(tmp_path):
    env = env_for(None, tmp_path, OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    result = run_assistant("check", env=env, cwd=tmp_path)
    assert result.returncode == 1
    (line,) = result.stdout.splitlines()[1:]
    assert " reachable " in line and " FAIL " in line and line.endswith("OPENAI_BASE_URL")
    with fake() as model:
        model.models = frozenset({"llama3.1"})
        result = run_assistant("check", env=env_for(model, tmp_path), cwd=tmp_path)
    assert result.returncode == 1
    line = lines_of(result.stdout)["model present"]
    assert " FAIL " in line and "ASSISTANT_MODEL" in line


def test_every_model_a_channel_names_is_checked(tmp_path):
    url = f"sqlite:///{tmp_path / 'assistant.db'}"
    store = open_store(url)
    try:
        store.set_channel_config(ChannelConfig(team="T1", channel="C1", model="llama3.1"))
    finally:
        store.close()
    with fake() as model:
        result = run_assistant("check", env=env_for(model, tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    checked = {line.split()[0] for line in result.stdout.splitlines()[1:]}
    assert checked == {MODEL, "llama3.1"}


def test_a_server_that_answers_no_chat_request_fails_the_check(tmp_path):
    """Issue 43: every chat call answered HTTP 501 with an HTML page. The check fails, every
    finding gets its line, and the page is named by its status and title, not its markup."""
    with fake(chat_page=501) as model:
        result = run_assistant("check", env=env_for(model, tmp_path), cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    rows = result.stdout.splitlines()[1:]
    assert [row.split("  ")[1].strip() for row in rows] == [
        "reachable", "chat", "tool calls", "streaming with usage", "images", "window",
    ]  # fmt: skip
    chat = rows[1]
    assert " FAIL " in chat
    assert 'HTTP 501: Not Implemented, an HTML page titled "Error response"' in chat
    assert chat.endswith("OPENAI_BASE_URL: a server with OpenAI's Chat Completions at its "
                         "/v1/chat/completions")  # fmt: skip
    assert all(" warn " in row and "answered no chat request" in row for row in rows[2:5])
    assert "<" not in result.stdout + result.stderr
    assert "1 failing" in result.stderr


def test_a_window_that_cannot_hold_the_instructions_and_the_answer_fails_the_check(tmp_path):
    """Issue 49: `llama-server -c 256`. The numbers, and what to set."""
    with fake(kind="llama.cpp", tells_window=True, context_tokens=256) as model:
        result = run_assistant("check", env=env_for(model, tmp_path), cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    line = lines_of(result.stdout)["window"]
    fixed = fixed_tokens(counter_for(MODEL))
    least = fixed + 256 + 1_000  # the answer's cap learned from the window: its least
    assert " FAIL " in line
    assert (
        f"256 tokens cannot hold the instructions and tools ({fixed}), the answer's cap (256, "
        f"learned from the server) and a log of 1000: {least} at least"
    ) in line
    assert line.endswith(f"a window of {least} or more (llama.cpp -c, vLLM --max-model-len, "
                         "Ollama num_ctx)")  # fmt: skip
    # The probe's own short prompt does not fit either: the chat line says where to look.
    chat = next(row for row in result.stdout.splitlines() if row.split("  ")[1:2] == ["chat"])
    assert "exceeds the available context size (256 tokens)" in chat
    assert chat.endswith("a larger window: see the window's line")
    with fake(kind="llama.cpp", tells_window=True, context_tokens=2_000) as model:
        env = env_for(model, tmp_path, ASSISTANT_ANSWER_TOKENS="800")
        result = run_assistant("check", env=env, cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    line = lines_of(result.stdout)["window"]
    assert "ASSISTANT_ANSWER_TOKENS (800)" in line
    assert line.endswith(f"ASSISTANT_ANSWER_TOKENS={2_000 - fixed - 1_000}")


@pytest.mark.parametrize(
    ("tools", "said", "fix"),
    [
        (None, "", "a template with tools (llama.cpp --jinja)"),
        (False, "its chat template takes no tools", "(llama.cpp --chat-template-file)"),
        (True, "its chat template takes tools: the model wrote text", "a model that calls tools"),
    ],
)
def test_the_tool_calls_hint_reads_what_the_server_says_of_its_template(tmp_path, tools, said, fix):
    """Issue 49: `--jinja` is suggested only where llama.cpp's /props cannot tell."""
    server = {"kind": "llama.cpp", "tool_choice": "ignored", "tells_window": True,
              "context_tokens": 8_192, "template_tools": tools}  # fmt: skip
    with fake(**server) as model:
        result = run_assistant("check", env=env_for(model, tmp_path), cwd=tmp_path)
    line = lines_of(result.stdout)["tool calls"]
    assert said in line and line.endswith(fix)
    assert ("--jinja" in line) is (tools is None)


@pytest.mark.parametrize(
    ("server", "answer"),
    [
        ({"context_tokens": 8_192}, "1024"),
        ({"context_tokens": 8_192, "props_window": False}, "1024"),  # /slots tells it
        ({"context_tokens": 8_192, "n_predict": 300}, "300"),
        ({"context_tokens": 64_000}, "4000"),
    ],
)
def test_the_answer_s_cap_is_learned_from_the_server_unless_set(tmp_path, server, answer):
    """Issue 49: without ASSISTANT_ANSWER_TOKENS the cap is an eighth of the window llama.cpp
    tells (in /props, else /slots), its own -n when smaller, the setting's default at most."""
    with fake(kind="llama.cpp", tells_window=True, **server) as model:
        result = run_assistant("check", env=env_for(model, tmp_path), cwd=tmp_path)
    line = lines_of(result.stdout)["window"]
    assert f"{server['context_tokens']} tokens" in line
    assert (f"answers capped at {answer} tokens (learned)" in line) is (answer != "4000")
    with fake(kind="llama.cpp", tells_window=True, **server) as model:
        env = env_for(model, tmp_path, ASSISTANT_ANSWER_TOKENS="700")
        result = run_assistant("check", env=env, cwd=tmp_path)
    assert "answers capped" not in result.stdout
