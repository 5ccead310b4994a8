"""Eval sets on disk: a directory with `manifest.json` and one JSON file per log under `logs/`
(the log once, with its cases), so a set is read a log at a time, never held whole.

    manifest.json   {"format": "assistant-eval-set", "version": 1, "logs": 2, "cases": 5,
                     "files": ["logs/00001.json", "logs/00002.json"]}
    logs/00001.json {"source": "T/C/1.2", "model": null, "log": [entry, …],
                     "cases": [{"at": 3, "reference": [3, 4], "feedback": null}, …]}

`model`: the channel's own model, when the thread's channel sets one (asked of unless a
model is named, as a run there would be)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from assistant.eval.cases import Case, case_of_json
from assistant.settings.input_files import TooLarge, read_bounded
from context.entry import Entry
from context.validate import validate_log

FORMAT = "assistant-eval-set"
VERSION = 1
MANIFEST = "manifest.json"
MODEL_CHARS = 100  # as a channel's own setting allows (`context/channels.py`)


class EvalSetError(ValueError):
    """An eval set that cannot be read or written; the message names the file."""


def is_eval_set(path: Path) -> bool:
    return path.is_dir() and (path / MANIFEST).is_file()


class SetWriter:
    """Writes a set a log at a time; the manifest last, so a set cut short has none."""

    def __init__(self, directory: Path) -> None:
        if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
            raise EvalSetError(f"{directory}: exists and is not an empty directory")
        self.directory = directory
        self.files: list[str] = []
        self.cases = 0

    def add(self, source: str, log: Sequence[Entry], cases: Sequence[Case]) -> None:
        if not cases:
            return
        name = f"logs/{len(self.files) + 1:05d}.json"
        self._write(name, log_document(source, log, cases))
        self.files.append(name)
        self.cases += len(cases)

    def finish(self, extra: dict[str, Any] | None = None) -> None:
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "logs": len(self.files),
            "cases": self.cases,
            **(extra or {}),
            "files": self.files,
        }
        self._write(MANIFEST, manifest)

    def _write(self, name: str, document: dict[str, Any]) -> None:
        path = self.directory / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", "utf-8")
        except OSError as exc:
            raise EvalSetError(f"cannot write {path}: {exc.strerror}") from None


def read_manifest(directory: Path) -> dict[str, Any]:
    """The manifest, checked: its files are relative paths inside the set."""
    where = directory / MANIFEST
    manifest = _json_file(where)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise EvalSetError(f"{where}: not an eval set's manifest (format {FORMAT!r})")
    if manifest.get("version") != VERSION:
        raise EvalSetError(f"{where}: version {manifest.get('version')!r}, expected {VERSION}")
    files = manifest.get("files")
    if not isinstance(files, list) or not all(_inside(name) for name in files):
        raise EvalSetError(f"{where}: `files` must list relative paths inside the set")
    count = manifest.get("cases")
    if type(count) is not int or count < 0:
        raise EvalSetError(f"{where}: `cases` must be a count")
    return manifest


def read_set(directory: Path) -> Iterator[tuple[str, list[Entry], list[Case]]]:
    """Each log of the set with its cases, one file at a time."""
    for name in read_manifest(directory)["files"]:
        yield read_log_file(directory / name)


def log_document(source: str, log: Sequence[Entry], cases: Sequence[Case]) -> dict[str, Any]:
    """A log with its cases, as a set's log file holds it (and a run kept in the store)."""
    return {
        "source": source,
        "model": cases[0].model if cases else None,
        "log": [entry.as_dict() for entry in log],
        "cases": [case.as_json() for case in cases],
    }


def read_log_file(path: Path) -> tuple[str, list[Entry], list[Case]]:
    return log_of_document(_json_file(path), str(path))


def log_of_document(document: object, path: str) -> tuple[str, list[Entry], list[Case]]:
    """A log file's document checked (`path` names it in the errors): its log and cases."""
    if not isinstance(document, dict):
        raise EvalSetError(f"{path}: must be an object with source, log and cases")
    source, log, cases = document.get("source"), document.get("log"), document.get("cases")
    if not isinstance(source, str) or not isinstance(log, list) or not isinstance(cases, list):
        raise EvalSetError(f"{path}: must be an object with source, log and cases")
    report = validate_log(json.dumps(log))
    if report.problems:
        raise EvalSetError(f"{path}: the log is not valid: {report.problems[0]}")
    model = document.get("model")
    if model is not None and not (isinstance(model, str) and 0 < len(model) <= MODEL_CHARS):
        raise EvalSetError(f"{path}: `model` must be null or a model name")
    entries = report.entries
    found = []
    for number, data in enumerate(cases):
        try:
            found.append(case_of_json(source, entries, data, model))
        except ValueError as exc:
            raise EvalSetError(f"{path}: case {number}: {exc}") from None
    return source, entries, found


def all_cases(logs: Iterable[tuple[str, list[Entry], list[Case]]]) -> Iterator[Case]:
    for _, _, cases in logs:
        yield from cases


def _inside(name: object) -> bool:
    if not isinstance(name, str) or not name or "\\" in name:
        return False
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts


def _json_file(path: Path) -> object:
    try:
        text = read_bounded(path).decode("utf-8")
    except OSError as exc:
        raise EvalSetError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (TooLarge, UnicodeDecodeError) as exc:
        raise EvalSetError(f"cannot read {path}: {exc}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise EvalSetError(f"{path}: not JSON ({exc})") from None
