"""ASSISTANT_MCP_FILE (docs/configuration.md#mcp-servers): the MCP servers' file, YAML or JSON,
read within the inputs' bound and checked at start (`load_settings`, `environment.py`)."""

from __future__ import annotations

from pathlib import Path

from assistant.mcp.config import ServerConfig, parse_servers
from assistant.settings.input_files import read_yaml_file


def read_mcp_file(path: Path) -> list[ServerConfig]:
    """The file's servers; ValueError naming every problem, one a line."""
    document = read_yaml_file(path)
    try:
        return parse_servers(document)
    except ValueError as exc:
        lines = str(exc).splitlines()
        raise ValueError("\n".join(f"{path}: {line}" for line in lines)) from None
