"""Configuration: checked at start, one message listing everything missing or wrong,
by variable name, never a secret value, never a traceback; `.env` in the working directory."""

from __future__ import annotations

import json
import socket

import pytest

from assistant.fakes import ids
from assistant.settings.environment import SettingsError, load_settings
from tests.process import clean_env, run_assistant

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


def test_a_judge_sample_outside_0_to_1_and_a_judge_model_too_long_are_named(tmp_path):
    result = start("serve", tmp_path, ASSISTANT_JUDGE_SAMPLE="1.5", ASSISTANT_JUDGE_MODEL="m" * 101)
    assert result.returncode == 2
    found = problems(result.stderr, "serve")
    assert "1" in found["ASSISTANT_JUDGE_SAMPLE"]
    assert "ASSISTANT_JUDGE_MODEL" in found


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


@pytest.mark.parametrize("command", ["run", "serve"])
def test_a_token_of_the_wrong_kind_is_named_before_slack_is_asked(command, tmp_path):
    # The two Slack tokens swapped: each is named, with the prefix it needs, and no value.
    swapped = {
        "SLACK_BOT_TOKEN": SECRET_VALUES["SLACK_APP_TOKEN"],
        "SLACK_APP_TOKEN": SECRET_VALUES["SLACK_BOT_TOKEN"],
        "SLACK_SIGNING_SECRET": SECRET_VALUES["SLACK_SIGNING_SECRET"],
        "OPENAI_API_KEY": SECRET_VALUES["OPENAI_API_KEY"],
        # Nothing listens there: a start that asked Slack would say so, not name the tokens.
        "SLACK_API_URL": "http://127.0.0.1:9/api/",
    }
    result = start(command, tmp_path, **swapped)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    found = problems(result.stderr, command)
    assert found["SLACK_BOT_TOKEN"] == (
        "not a bot token (OAuth & Permissions → Bot User OAuth Token): it must start with xoxb-"
    )
    assert found["SLACK_APP_TOKEN"] == (
        "not an app-level token (Basic Information → App-Level Tokens): it must start with xapp-"
    )
    assert set(found) == {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"}  # not also "missing"
    for value in SECRET_VALUES.values():
        assert value not in result.stdout + result.stderr
        assert value[-12:] not in result.stdout + result.stderr


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


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b" \n\n", "persona.txt is empty"),
        (b"You are \xff.", "persona.txt is not UTF-8 text (byte 8)"),
    ],
)
def test_a_prompt_file_empty_or_not_utf8_at_start_is_reported(tmp_path, content, problem):
    (tmp_path / "persona.txt").write_bytes(content)
    result = start("replay", tmp_path, OPENAI_API_KEY="sk-x", ASSISTANT_PROMPT_FILE="persona.txt")
    assert result.returncode == 2
    assert problems(result.stderr, "replay") == {"ASSISTANT_PROMPT_FILE": problem}


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


def test_an_unknown_trace_format_is_named(tmp_path):
    result = start("replay", tmp_path, OPENAI_API_KEY="sk-x", ASSISTANT_TRACE="yaml")
    assert result.returncode == 2
    assert problems(result.stderr, "replay") == {
        "ASSISTANT_TRACE": "Input should be 'text', 'json' or 'off'"
    }


FIVE_PROMPTS = json.dumps([{"title": f"t{n}", "message": f"m{n}"} for n in range(5)])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(FIVE_PROMPTS, "at most 4 prompts, found 5", id="too-many"),
        pytest.param('[{"title": "Lunch"}]', "prompt 1, message: Field required", id="no-message"),
        pytest.param(
            '[{"title": "", "message": "x"}]',
            "prompt 1, title: String should have at least 1 character",
            id="empty-title",
        ),
        pytest.param('["Lunch"]', 'prompt 1: must be an object {"title"', id="not-an-object"),
        pytest.param("[{]", "not JSON (", id="not-json"),
        pytest.param("prompts.json", "no such file prompts.json", id="no-file"),
    ],
)
def test_bad_suggested_prompts_are_refused_at_start(value, message, tmp_path):
    result = start("serve", tmp_path, ASSISTANT_SUGGESTED_PROMPTS=value)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    found = problems(result.stderr, "serve")
    assert set(found) == {"ASSISTANT_SUGGESTED_PROMPTS"} | REQUIRED["serve"]
    assert message in found["ASSISTANT_SUGGESTED_PROMPTS"]
    assert list(tmp_path.iterdir()) == []


def test_suggested_prompts_in_a_file_are_read_and_checked(tmp_path):
    good = tmp_path / "good.json"
    good.write_text('[{"title": "Lunch", "message": "What should I eat?"}]', encoding="utf-8")
    settings = load_settings(
        "replay", _env_file=None, openai_api_key="sk-x", assistant_suggested_prompts=str(good)
    )
    assert [p.model_dump() for p in settings.persona.suggested_prompts] == [
        {"title": "Lunch", "message": "What should I eat?"}
    ]
    (tmp_path / "bad.json").write_text('[{"title": "Lunch", "text": "x"}]', encoding="utf-8")
    result = start(
        "replay", tmp_path, OPENAI_API_KEY="sk-x", ASSISTANT_SUGGESTED_PROMPTS="bad.json"
    )
    assert result.returncode == 2
    found = problems(result.stderr, "replay")["ASSISTANT_SUGGESTED_PROMPTS"]
    assert found.startswith("in bad.json: prompt 1, message: Field required")
    assert "text: Extra inputs are not permitted" in found


def test_bad_loading_messages_are_refused_at_start(tmp_path):
    eleven = json.dumps(["Thinking…"] * 11)
    result = start("replay", tmp_path, OPENAI_API_KEY="sk-x", ASSISTANT_LOADING_MESSAGES=eleven)
    assert result.returncode == 2
    assert problems(result.stderr, "replay") == {
        "ASSISTANT_LOADING_MESSAGES": "at most 10 messages, found 11"
    }


def test_a_personas_file_that_is_not_names_and_texts_is_reported(tmp_path):
    (tmp_path / "personas.yaml").write_text("- just\n- a list\n")
    result = start(
        "replay", tmp_path, OPENAI_API_KEY="sk-x", ASSISTANT_PERSONAS_FILE="personas.yaml"
    )
    assert result.returncode == 2
    assert problems(result.stderr, "replay") == {
        "ASSISTANT_PERSONAS_FILE": "personas.yaml must map persona names to their text"
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


OAUTH = {"SLACK_CLIENT_ID": "111.222", "SLACK_CLIENT_SECRET": "topsecretclientsecret"}


def test_oauth_settings_come_as_a_pair_and_not_with_a_bot_token(tmp_path):
    with pytest.raises(SettingsError) as half:
        load_settings("http", _env_file=None, slack_client_id="111.222")
    assert "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET: set both, or neither" in str(half.value)
    with pytest.raises(SettingsError) as both:
        load_settings(
            "http", _env_file=None, slack_bot_token=SECRET_VALUES["SLACK_BOT_TOKEN"],
            slack_client_id="111.222", slack_client_secret=OAUTH["SLACK_CLIENT_SECRET"],
        )  # fmt: skip
    assert "SLACK_BOT_TOKEN: not with SLACK_CLIENT_ID" in str(both.value)
    assert OAUTH["SLACK_CLIENT_SECRET"] not in str(both.value)
    with pytest.raises(SettingsError) as incomplete:  # through OAuth, no bot token is wanted
        load_settings("http", _env_file=None, slack_client_id="111.222", slack_client_secret="x")
    assert "SLACK_SIGNING_SECRET: missing" in str(incomplete.value)
    assert "SLACK_BOT_TOKEN" not in str(incomplete.value)


def test_a_port_in_use_is_one_line_and_status_2_before_the_app_starts(slack, model, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = clean_env(
            SLACK_BOT_TOKEN=ids.BOT_TOKEN,
            SLACK_SIGNING_SECRET=ids.SIGNING_SECRET,
            SLACK_API_URL=slack.api_url,
            OPENAI_API_KEY=ids.OPENAI_API_KEY,
            OPENAI_BASE_URL=model.base_url,
            PORT=str(port),
        )
        result = run_assistant("serve", "--host", "127.0.0.1", env=env, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    # Nothing of the app's startup (no "Waiting for application startup", no lifespan).
    assert result.stderr.splitlines() == [
        f"assistant serve: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]
    assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []  # no store made for a start that failed


@pytest.mark.parametrize(
    ("value", "catalog"),
    [("pt_BR", "pt_BR"), ("pt-BR", "pt_BR"), ("pt-br", "pt_BR"), ("PT_br", "pt_BR"),
     ("ES", "es"), ("ja", "ja"), (" en ", "en")],
)  # fmt: skip
def test_assistant_locale_takes_a_catalog_in_either_spelling(value, catalog):
    settings = load_settings(
        "replay", _env_file=None, openai_api_key="sk-x", assistant_locale=value
    )
    assert settings.persona.locale == catalog


@pytest.mark.parametrize("value", ["pt-PT", "pt", "fr", "en-US", "pt_BR_x", "pt--BR"])
def test_assistant_locale_names_a_catalog_not_a_language_to_match(value, tmp_path):
    result = start("replay", tmp_path, OPENAI_API_KEY="sk-x", ASSISTANT_LOCALE=value)
    assert result.returncode == 2
    assert problems(result.stderr, "replay") == {
        "ASSISTANT_LOCALE": f"no catalog of {value!r}: one of en, pt_BR, es, ja"
    }


def test_a_price_table_that_does_not_parse_is_refused_at_start(tmp_path):
    """The app reads ASSISTANT_PRICES for the spend limits (docs/operations.md#spend-limits):
    a table that does not parse is named at start, as `assistant usage` names it."""
    result = start(
        "replay", tmp_path, OPENAI_API_KEY="sk-x", ASSISTANT_PRICES='{"gpt-4o": {"input": -1}}'
    )
    assert result.returncode == 2
    found = problems(result.stderr, "replay")["ASSISTANT_PRICES"]
    assert found.startswith("gpt-4o.input: Input should be greater than or equal to 0")
    settings = load_settings(
        "replay",
        _env_file=None,
        openai_api_key="sk-x",
        assistant_prices='{"gpt-4o": {"input": 2.5, "output": 10}}',
    )
    assert settings.model.prices is not None and settings.model.prices.price_of("gpt-4o")
