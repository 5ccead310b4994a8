"""ASSISTANT_MCP_FILE (docs/configuration.md#mcp-servers): the MCP servers' file, YAML or JSON,
read within the inputs' bound and checked at start (`assistant.settings.load_settings`)."""

from __future__ import annotations

from pathlib import Path

import yaml

from assistant.input_files import TooDeep, TooLarge, load_yaml, read_bounded
from assistant.mcp.config import ServerConfig, parse_servers


def read_mcp_file(path: Path) -> list[ServerConfig]:
    """The file's servers; ValueError naming every problem, one a line."""
    try:
        text = read_bounded(path).decode("utf-8")
    except FileNotFoundError:
        raise ValueError(f"no such file {path}") from None
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    except TooLarge as exc:
        raise ValueError(f"{path} is {exc}") from None
    try:
        document = load_yaml(text)
    except TooDeep as exc:
        raise ValueError(f"{path} is {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ValueError(f"{path} is not YAML or JSON{where}") from None
    try:
        return parse_servers(document)
    except ValueError as exc:
        lines = str(exc).splitlines()
        raise ValueError("\n".join(f"{path}: {line}" for line in lines)) from None
