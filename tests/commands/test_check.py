"""`assistant check` against the fake model playing OpenAI, llama.cpp and vLLM: one line a
finding, what to set when it is wrong, the exit status; `serve` prints its summary at start
and applies what it found (issue 35)."""

from __future__ import annotations

from assistant.fakes import FakeOpenAI, ids
from assistant.fakes.openai import responses as replies
from context.channels import ChannelConfig
from context.storage import open_store
from tests.commands.test_settings import free_port
from tests.process import AssistantProcess, clean_env, run_assistant

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


def test_serve_prints_the_summary_at_start_and_asks_as_json_from_then_on(tmp_path, slack):
    with fake(kind="llama.cpp", tool_choice="ignored") as model:
        env = env_for(model, tmp_path, ASSISTANT_MODEL_CHECK="on", PORT=str(free_port()),
                      SLACK_BOT_TOKEN=ids.BOT_TOKEN, SLACK_SIGNING_SECRET=ids.SIGNING_SECRET,
                      SLACK_API_URL=slack.api_url)  # fmt: skip
        with AssistantProcess("serve", "--host", "127.0.0.1", env=env, cwd=tmp_path) as app:
            said = app.stderr.wait_for(r"model check of http://127\.0\.0\.1:\d+: .*")
    assert "to look at" in said.group(0) and "asked as JSON from now on" in said.group(0)
    assert "Traceback" not in app.stderr.text
