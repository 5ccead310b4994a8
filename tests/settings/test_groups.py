"""`Settings` by concern: each group reads its variables under the names they always had, from
the environment, `.env` and `load_settings`' overrides alike."""

from __future__ import annotations

import pytest

from assistant.settings.environment import Settings, SettingsError, load_settings


def test_each_group_reads_its_variables_by_their_own_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("ASSISTANT_MCP_CALL_SECONDS=12\nASSISTANT_NAME=Kit\n")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
    monkeypatch.setenv("PORT", "3100")
    monkeypatch.setenv("ASSISTANT_SLACK_OUTAGE_SECONDS", "0")
    monkeypatch.setenv("OPENAI_TIMEOUT", "5")
    monkeypatch.setenv("ASSISTANT_MODEL", "m-1")
    monkeypatch.setenv("ASSISTANT_MAX_STEPS", "3")
    monkeypatch.setenv("ASSISTANT_ANSWER_BOTS", "true")
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path}/x.db")
    monkeypatch.setenv("ASSISTANT_TRACE", "json")
    settings = load_settings("replay", openai_api_key="k", assistant_max_mcp_calls_per_run=2)
    assert settings.slack.signing_secret is not None
    assert (settings.slack.port, settings.slack.outage_seconds) == (3100, 0.0)
    assert (settings.model.timeout, settings.model.name) == (5.0, "m-1")
    assert settings.model.api_key is not None and settings.model.api_key.get_secret_value() == "k"
    assert (settings.answers.max_steps, settings.answers.bots) == (3, True)
    assert settings.persona.name == "Kit"
    assert (settings.tools.mcp_call_seconds, settings.tools.max_mcp_calls_per_run) == (12.0, 2)
    assert settings.storage.database_url == f"sqlite:///{tmp_path}/x.db"
    assert settings.telemetry.trace == "json"
    assert settings.value("ASSISTANT_MAX_STEPS") == 3


def test_problems_of_several_groups_are_one_message_by_variable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SettingsError) as raised:
        load_settings(
            "http", _env_file=None, port="x", assistant_max_steps=0, assistant_trace="loud"
        )
    named = [line.split(":")[0] for line in str(raised.value).splitlines()]
    wrong = {"PORT", "ASSISTANT_MAX_STEPS", "ASSISTANT_TRACE"}
    assert set(named) == wrong | {"SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "OPENAI_API_KEY"}


def test_an_override_that_is_no_setting_is_refused():
    # A misspelt name in a test or a command would otherwise be ignored, the default kept.
    with pytest.raises(TypeError, match=r"not a setting: assistant_max_step$"):
        load_settings("replay", _env_file=None, openai_api_key="k", assistant_max_step=3)


def test_every_variable_has_one_place():
    variables = Settings.variables()
    places = {(v.group, v.field) for v in variables.values()}
    assert (
        len(places) == len(variables) == 61
    )  # prices; key, URL; judge; routines; memory; questions
    assert variables["slack_bot_token"].group == "slack"
    assert variables["database_url"].group == "storage"
