"""The personas kept in files: ASSISTANT_PROMPT_FILE, the deployment's own (`PromptFile`),
and ASSISTANT_PERSONAS_FILE, named personas shipped with the deployment, a YAML (or JSON,
which YAML reads too) mapping of a name to the persona's text:

    pirate: You're a pirate. Answer like one.
    support: |
      You answer questions about our product...
"""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path

from assistant.settings.input_files import read_text_file, read_yaml_file

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")

log = logging.getLogger(__name__)


def read_prompt(path: Path) -> str:
    """ASSISTANT_PROMPT_FILE's text; ValueError, one line, naming what is wrong (an empty
    file is as good as a missing one: a thread must not start with no persona)."""
    text = read_text_file(path).strip()
    if not text:
        raise ValueError(f"{path} is empty")
    return text


class PromptFile:
    """ASSISTANT_PROMPT_FILE, read each time a new thread needs it, so that an edit applies
    to the threads started after it. Once read, a file that goes bad (moved, deleted, emptied,
    not UTF-8) costs no thread anything: new threads get its last good text, and the log says
    so in one line (again only when the problem changes), and in one more when it reads well
    again. Its first read (at start, `load_settings`) raises ValueError: a bad file there is a
    start error."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()  # new threads open in the store's worker threads
        self._last: str | None = None
        self._problem: str | None = None

    def text(self) -> str:
        try:
            text = read_prompt(self.path)
        except ValueError as exc:
            with self._lock:
                if self._last is None:
                    raise
                if str(exc) != self._problem:
                    self._problem = str(exc)
                    log.warning(
                        "ASSISTANT_PROMPT_FILE: %s; new threads get its last good text", exc
                    )
                return self._last
        with self._lock:
            if self._problem is not None:
                self._problem = None
                log.warning("ASSISTANT_PROMPT_FILE: %s reads again", self.path)
            self._last = text
        return text


def read_personas(path: Path) -> dict[str, str]:
    """The file's personas by name; ValueError, one line, naming what is wrong."""
    loaded = read_yaml_file(path)
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
