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
