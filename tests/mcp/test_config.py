"""ASSISTANT_MCP_FILE checked at start: every problem in the one message, no secret printed."""

from __future__ import annotations

import pytest

from assistant.settings.environment import SettingsError, load_settings

FILE = """
servers:
  shop:
    url: http://127.0.0.1:8931/mcp
    headers: {Authorization: "Bearer ${SHOP_TOKEN}", X-Other: "${NOT_SET_ANYWHERE}"}
  both:
    url: http://127.0.0.1:8931/mcp
    command: [python, -m, files]
  bad_name:
    command: [python]
  ftp:
    url: ftp://example.com/mcp
  extra:
    command: [python]
    colour: blue
"""


def settings_with(path, **extra):
    values = {"openai_api_key": "sk-test", "assistant_mcp_file": str(path), **extra}
    return load_settings("replay", _env_file=None, **values)


def test_every_problem_of_the_file_is_named_in_the_one_start_message(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOP_TOKEN", "s3cret-token-value")
    path = tmp_path / "mcp.yaml"
    path.write_text(FILE)
    with pytest.raises(SettingsError) as raised:
        settings_with(path)
    where = f"ASSISTANT_MCP_FILE: {path}: servers."
    assert str(raised.value).splitlines() == [
        f"{where}both: give either url (streamable HTTP) or command (stdio), not both",
        f"{where}ftp: url must be an http:// or https:// URL with a host",
        f"{where}extra.colour: unknown field",
    ]


def test_names_and_the_environment_are_checked_once_the_shapes_are_good(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOP_TOKEN", "s3cret-token-value")
    path = tmp_path / "mcp.yaml"
    path.write_text(FILE.split("  both:")[0] + "  bad_name:\n    command: [python]\n")
    with pytest.raises(SettingsError) as raised:
        settings_with(path)
    message = str(raised.value)
    where = f"ASSISTANT_MCP_FILE: {path}: servers."
    assert message.splitlines() == [
        f"{where}shop.headers.X-Other: NOT_SET_ANYWHERE not set in the environment",
        f"{where}'bad_name': a server's name is 1 to 32 letters, digits or '-'",
    ]
    assert "s3cret" not in message


def test_a_file_that_is_not_there_or_not_yaml_is_one_line(tmp_path):
    with pytest.raises(SettingsError, match=r"ASSISTANT_MCP_FILE: no such file"):
        settings_with(tmp_path / "missing.yaml")
    path = tmp_path / "broken.yaml"
    path.write_text("servers: [unclosed")
    with pytest.raises(SettingsError, match=r"is not YAML or JSON"):
        settings_with(path)


def test_a_good_file_gives_its_servers_and_no_file_none(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOP_TOKEN", "s3cret-token-value")
    path = tmp_path / "mcp.yaml"
    path.write_text(FILE.split("  both:")[0].replace(', X-Other: "${NOT_SET_ANYWHERE}"', ""))
    (shop,) = settings_with(path).tools.mcp_servers()
    assert shop.headers["Authorization"].get_secret_value() == "Bearer s3cret-token-value"
    assert "s3cret" not in repr(shop)
    assert settings_with(path, assistant_mcp_file=None).tools.mcp_servers() == []


AUTH_FILE = """
servers:
  tracker:
    url: https://tracker.example.com/mcp
    auth: user
    client_id: aya
    client_secret_env: TRACKER_SECRET_NOT_SET
  withheaders:
    url: https://x.example.com/mcp
    auth: user
    headers: {A: b}
  stdio:
    command: [python]
    auth: user
  scoped:
    url: https://y.example.com/mcp
    scopes: [read]
"""


def test_auth_user_servers_are_checked_and_name_their_problems(tmp_path):
    path = tmp_path / "mcp.yaml"
    path.write_text(AUTH_FILE)
    with pytest.raises(SettingsError) as raised:
        settings_with(path)
    where = f"ASSISTANT_MCP_FILE: {path}: servers."
    assert str(raised.value).splitlines() == [
        f"{where}withheaders: auth: user takes no headers: each call carries its signed-in token",
        f"{where}stdio: auth: user goes with a url only (a sign-in is over HTTP)",
        f"{where}scoped: client_id, client_secret_env and scopes go with auth: user or "
        "deployment only",
    ]


def test_auth_user_needs_serve_a_secret_key_and_a_public_url(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACKER_SECRET", "s3cret-client")
    path = tmp_path / "mcp.yaml"
    path.write_text(
        "servers:\n  tracker:\n    url: https://t.example.com/mcp\n    auth: user\n"
        "    client_id: aya\n    client_secret_env: TRACKER_SECRET\n"
    )
    base = {"openai_api_key": "sk-test", "assistant_mcp_file": str(path),
            "slack_bot_token": "xoxb-1", "slack_app_token": "xapp-1",
            "slack_signing_secret": "s"}  # fmt: skip
    with pytest.raises(SettingsError) as raised:
        load_settings("socket", _env_file=None, **base)
    assert "use `assistant serve`" in str(raised.value)
    with pytest.raises(SettingsError) as raised:
        load_settings("http", _env_file=None, **base, assistant_secret_key="not-a-key")
    problems = str(raised.value).splitlines()
    assert any(p.startswith("ASSISTANT_SECRET_KEY: key 1 is not a Fernet key") for p in problems)
    assert "ASSISTANT_PUBLIC_URL: missing (servers that sign in: tracker)" in problems
    assert "not-a-key" not in str(raised.value) and "s3cret-client" not in str(raised.value)
    from cryptography.fernet import Fernet

    settings = load_settings(
        "http",
        _env_file=None,
        **base,
        assistant_secret_key=f"{Fernet.generate_key().decode()},{Fernet.generate_key().decode()}",
        assistant_public_url="https://aya.example.com/",
    )
    assert settings.tools.public_url == "https://aya.example.com"
    (server,) = settings.tools.mcp_servers()
    assert server.per_person and server.client_id == "aya"
    assert "s3cret-client" not in repr(server)
