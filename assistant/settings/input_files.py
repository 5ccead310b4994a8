"""The files people hand the assistant (a log to show or replay, a channels file to import, a
persona, the personas file): read within one bound, and YAML (or JSON, which YAML reads too)
parsed within a depth, so that `/dev/zero`, an endless pipe or a file of 100,000 `[` is one
line of error, not the machine's memory or a traceback."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

# The most read of one input: a log of 10,000 long entries is a few MB. docs/command-line.md,
# "Command line".
MAX_INPUT_BYTES = 64 * 1024 * 1024
MAX_INPUT_SHOWN = "64 MiB"
# PyYAML builds a document by recursion (a RecursionError deep down); its events come one by
# one, with no recursion, so the depth is counted on them first, as `context.validate` bounds
# a log's. The files read here need 4.
MAX_DEPTH = 32


class TooLarge(ValueError):
    """The input is larger than MAX_INPUT_BYTES."""


class TooDeep(ValueError):
    """The document is nested deeper than MAX_DEPTH."""


def read_bounded(path: str | Path) -> bytes:
    """The bytes of the file (standard input for `-`), if no more than MAX_INPUT_BYTES;
    OSError or TooLarge."""
    if str(path) == "-":
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    else:
        with open(path, "rb") as file:  # a device or a pipe as well as a file
            data = file.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise TooLarge(f"larger than {MAX_INPUT_SHOWN}, the most read of one input")
    return data


def load_yaml(text: str) -> Any:
    """The document in `text`; TooDeep, or yaml.YAMLError for text that is not YAML."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise TooDeep(f"nested deeper than {MAX_DEPTH} mappings and lists")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return yaml.safe_load(text)


def read_text_file(path: Path) -> str:
    """A settings file's text (ASSISTANT_PROMPT_FILE, …); ValueError, one line, naming what
    is wrong and where."""
    try:
        return read_bounded(path).decode("utf-8")
    except FileNotFoundError:
        raise ValueError(f"no such file {path}") from None
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    except TooLarge as exc:
        raise ValueError(f"{path} is {exc}") from None


def read_yaml_file(path: Path) -> Any:
    """A settings file's YAML or JSON document (the personas file, ASSISTANT_MCP_FILE);
    ValueError, one line, naming what is wrong and where."""
    text = read_text_file(path)
    try:
        return load_yaml(text)
    except TooDeep as exc:
        raise ValueError(f"{path} is {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ValueError(f"{path} is not YAML or JSON{where}") from None
