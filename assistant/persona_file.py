"""ASSISTANT_PERSONAS_FILE: named personas shipped with the deployment, a YAML (or JSON,
which YAML reads too) mapping of a name to the persona's text:

    pirate: You're a pirate. Answer like one.
    support: |
      You answer questions about our product...
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from assistant.input_files import TooDeep, TooLarge, load_yaml, read_bounded

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


def read_personas(path: Path) -> dict[str, str]:
    """The file's personas by name; ValueError, one line, naming what is wrong."""
    try:
        loaded = load_yaml(read_bounded(path).decode("utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    except (TooLarge, TooDeep) as exc:
        raise ValueError(f"{path} is {exc}") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise ValueError(f"{path} is not YAML or JSON{line}") from None
    if not isinstance(loaded, dict) or not loaded:
        raise ValueError(f"{path} must map persona names to their text")
    personas: dict[str, str] = {}
    for name, text in loaded.items():
        if not isinstance(name, str) or not NAME.match(name):
            raise ValueError(f"{path}: persona name {name!r} must be letters, digits, _.-")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{path}: persona {name!r} must be a non-empty text")
        personas[name] = text.strip()
    return personas
