"""Configuration: checked at start, one message listing everything missing or wrong,
by variable name, never a secret value, never a traceback; `.env` in the working directory."""

from __future__ import annotations

import signal

import pytest

from fakes import ids
from tests.process import TIMEOUT, AssistantProcess, clean_env, run_assistant

REQUIRED = {
    "run": {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "OPENAI_API_KEY"},
    "serve": {"SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "OPENAI_API_KEY"},
    "replay": {"OPENAI_API_KEY"},
}
SECRET_VALUES = {
    "SLACK_BOT_TOKEN": "xoxb-111-222-topsecretbottoken",
    "SLACK_APP_TOKEN": "xapp-1-A111-333-topsecretapptoken",
    "SLACK_SIGNING_SECRET": "topsecretsigningsecret0123456789",
    "OPENAI_API_KEY": "sk-proj-topsecretopenaikey",
}


def start(command: str, tmp_path, **env: str):
    args = [command, "-"] if command == "replay" else [command]
    # Standard input for replay is never read: the settings are checked first.
    return run_assistant(*args, env=clean_env(**env), cwd=tmp_path, stdin=b"")


def problems(stderr: str, command: str) -> dict[str, str]:
    """The variables the message names, with what it says about each."""
    lines = stderr.splitlines()
    assert lines[0] == f"assistant {command}: the settings are incomplete:", stderr
    assert sum(line.startswith("assistant ") for line in lines) == 1, stderr  # one message
    found = {}
    for line in lines[1:]:
        if line.startswith("  "):
            name, _, what = line.strip().partition(": ")
            assert what, line
            found[name] = what
    return found


@pytest.mark.parametrize("command", ["run", "serve", "replay"])
def test_an_empty_environment_lists_every_missing_variable(command, tmp_path):
    result = start(command, tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    found = problems(result.stderr, command)
    assert found == {name: "missing" for name in REQUIRED[command]}
    assert list(tmp_path.iterdir()) == []  # no database created for a start that failed


@pytest.mark.parametrize("command", ["run", "serve"])
def test_wrong_values_are_named_along_with_the_missing_ones(command, tmp_path):
    result = start(command, tmp_path, PORT="abc", ASSISTANT_MAX_STEPS="0")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    found = problems(result.stderr, command)
    assert set(found) == {"PORT", "ASSISTANT_MAX_STEPS"} | REQUIRED[command]
    assert "integer" in found["PORT"]
    assert "1" in found["ASSISTANT_MAX_STEPS"]
    assert "abc" not in result.stderr  # the message names the variable, not the value


@pytest.mark.parametrize("command", ["run", "serve"])
def test_secret_values_never_appear_when_something_else_is_wrong(command, tmp_path):
    present = (REQUIRED[command] - {"OPENAI_API_KEY"}) | {"SLACK_SIGNING_SECRET"}
    env = {name: SECRET_VALUES[name] for name in present}
    result = start(command, tmp_path, PORT="99999", ASSISTANT_CONTEXT_TOKENS="many", **env)
    assert result.returncode == 2
    found = problems(result.stderr, command)
    assert set(found) == {"OPENAI_API_KEY", "PORT", "ASSISTANT_CONTEXT_TOKENS"}
    output = result.stdout + result.stderr
    for value in SECRET_VALUES.values():
        assert value not in output
        assert value[-12:] not in output


def test_both_prompt_sources_are_refused(tmp_path):
    (tmp_path / "persona.txt").write_text("You are Bob.", encoding="utf-8")
    result = start(
        "replay", tmp_path, ASSISTANT_PROMPT="You are Aya.", ASSISTANT_PROMPT_FILE="persona.txt"
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "ASSISTANT_PROMPT or ASSISTANT_PROMPT_FILE" in result.stderr


def test_a_prompt_file_that_does_not_exist_is_reported(tmp_path):
    result = start("replay", tmp_path, OPENAI_API_KEY="sk-x", ASSISTANT_PROMPT_FILE="nope.txt")
    assert result.returncode == 2
    assert problems(result.stderr, "replay") == {"ASSISTANT_PROMPT_FILE": "no such file nope.txt"}


def test_a_context_budget_with_no_room_for_the_log_is_reported(tmp_path):
    result = start(
        "replay",
        tmp_path,
        OPENAI_API_KEY="sk-x",
        ASSISTANT_CONTEXT_TOKENS="3000",
        ASSISTANT_ANSWER_TOKENS="1800",
    )
    assert result.returncode == 2
    found = problems(result.stderr, "replay")
    assert set(found) == {"ASSISTANT_CONTEXT_TOKENS"}
    assert "ASSISTANT_ANSWER_TOKENS (1800)" in found["ASSISTANT_CONTEXT_TOKENS"]
    assert "at least 1000 are needed" in found["ASSISTANT_CONTEXT_TOKENS"]


def test_dotenv_in_the_working_directory_is_read(tmp_path):
    (tmp_path / ".env").write_text(
        f"SLACK_BOT_TOKEN={SECRET_VALUES['SLACK_BOT_TOKEN']}\n"
        f"OPENAI_API_KEY={SECRET_VALUES['OPENAI_API_KEY']}\n"
        "ASSISTANT_MAX_STEPS=0\n"
        "PORT=abc\n",
        encoding="utf-8",
    )
    # The environment wins over .env: PORT is fine, ASSISTANT_MAX_STEPS is not.
    result = start("run", tmp_path, PORT="8080")
    assert result.returncode == 2
    assert set(problems(result.stderr, "run")) == {"SLACK_APP_TOKEN", "ASSISTANT_MAX_STEPS"}
    for value in SECRET_VALUES.values():
        assert value not in result.stdout + result.stderr


def test_a_complete_dotenv_is_enough_to_run(slack, model, tmp_path):
    (tmp_path / ".env").write_text(
        "\n".join(
            [
                f"SLACK_BOT_TOKEN={ids.BOT_TOKEN}",
                f"SLACK_APP_TOKEN={ids.APP_TOKEN}",
                f"SLACK_API_URL={slack.api_url}",
                f"OPENAI_API_KEY={ids.OPENAI_API_KEY}",
                f"OPENAI_BASE_URL={model.base_url}",
                "DATABASE_URL=sqlite:///from-dotenv.db",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    with AssistantProcess("run", env=clean_env(), cwd=tmp_path) as app:
        slack.wait_connected(timeout=TIMEOUT)
        code = app.stop(signal.SIGTERM)
    assert code == 0, app.stderr.text
    assert {c.token for c in slack.calls_to("apps.connections.open")} == {ids.APP_TOKEN}
    assert (tmp_path / "from-dotenv.db").exists()
