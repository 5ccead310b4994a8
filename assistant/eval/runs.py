"""Saved eval runs (`assistant eval --save-run DIR`): everything a run asked and got, kept to
be scored again (`assistant eval rescore`) and compared (`assistant eval diff`) without asking
the model again (docs/evaluation.md, "Saved runs"). Written and read a case at a time:

    manifest.json      {"format": "assistant-eval-run", "version": 1, "trials": 1,
                        "trials_beat": null, "judge": null, "stopped": null,
                        "configs": [{"name", "model", …, "tool_mode", "results": "results-1.jsonl",
                                     "summary": {…}}]}
    cases/             the run's cases, an eval set (`assistant/eval/sets.py`)
    results-1.jsonl    a line a case, in the cases' order: its trials' scores and answers

Keys and tokens (`context/redaction.py`'s secrets) are replaced in every file by stable
placeholders, the same in a log and in an answer, so scoring again finds the same texts; no
key to undo it is written. The manifest is written last: a run cut short has none."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from assistant.eval.ask import Answer, Config
from assistant.eval.cases import Case
from assistant.eval.report import Run
from assistant.eval.runner import CaseResult, answer_of
from assistant.eval.sets import EvalSetError, SetWriter, read_set
from assistant.settings.input_files import read_bounded
from context.entry import Entry
from context.redaction import Redactor

FORMAT = "assistant-eval-run"
VERSION = 1
MANIFEST = "manifest.json"
CASES = "cases"
LINE_BYTES = 16 * 1024 * 1024  # a case's line: its trials' answers, each within a reply's size


class EvalRunError(ValueError):
    """A saved run that cannot be read or written; the message names the file."""


def is_saved_run(path: Path) -> bool:
    return (path / MANIFEST).is_file() and (path / CASES).is_dir()


class RunWriter:
    """Writes a run: its cases first (`write_cases`), each configuration's results as they
    end (`results`), the manifest last (`finish`)."""

    def __init__(self, directory: Path) -> None:
        if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
            raise EvalRunError(f"{directory}: exists and is not an empty directory")
        self.directory = directory
        self._redactor = Redactor(kinds=("SECRET",))
        self._files: list[IO[str]] = []

    def write_cases(self, logs: Iterable[tuple[str, list[Entry], list[Case]]]) -> int:
        try:
            writer = SetWriter(self.directory / CASES)
            for source, entries, cases in logs:
                redacted = [self._redactor.entry(entry) for entry in entries]
                writer.add(self._redactor.text(source), redacted, cases)
            writer.finish({"redacted": "secrets"})
        except EvalSetError as exc:
            raise EvalRunError(str(exc)) from None
        return writer.cases

    def results(self, number: int) -> ResultsWriter:
        path = self.directory / f"results-{number}.jsonl"
        try:
            file = path.open("x", encoding="utf-8")
        except OSError as exc:
            raise EvalRunError(f"cannot write {path}: {exc.strerror}") from None
        self._files.append(file)
        return ResultsWriter(file, self._redactor)

    def finish(self, manifest: dict[str, Any]) -> None:
        for file in self._files:
            file.close()
        document = {"format": FORMAT, "version": VERSION, **self._redactor.value(manifest)}
        path = self.directory / MANIFEST
        try:
            path.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", "utf-8")
        except OSError as exc:
            raise EvalRunError(f"cannot write {path}: {exc.strerror}") from None

    def close(self) -> None:
        for file in self._files:
            file.close()


class ResultsWriter:
    def __init__(self, file: IO[str], redactor: Redactor) -> None:
        self._file, self._redactor = file, redactor

    def add(self, result: CaseResult) -> None:
        line = json.dumps(self._redactor.value(result.spooled()), ensure_ascii=False)
        self._file.write(line + "\n")


def config_entries(runs: Sequence[Run], k: int) -> list[dict[str, Any]]:
    """The manifest's `configs`: each configuration as it ran, its summary and its results."""
    return [
        run.config.describe()
        | {"tool_mode": run.mode, "summary": run.totals.as_json(k)}
        | {"results": f"results-{number}.jsonl"}
        for number, run in enumerate(runs, 1)
    ]


def read_manifest(directory: Path) -> dict[str, Any]:
    """The manifest, checked: what rescore and diff read from it."""
    where = directory / MANIFEST
    try:
        manifest = json.loads(read_bounded(where).decode("utf-8"))
    except OSError as exc:
        raise EvalRunError(f"cannot read {where}: {exc.strerror or exc}") from None
    except ValueError as exc:  # not UTF-8, not JSON, or too large
        raise EvalRunError(f"{where}: not a saved run's manifest ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise EvalRunError(f"{where}: not a saved run's manifest (format {FORMAT!r})")
    if manifest.get("version") != VERSION:
        raise EvalRunError(f"{where}: version {manifest.get('version')!r}, expected {VERSION}")
    configs = manifest.get("configs")
    if not isinstance(configs, list) or not configs or not all(_config_ok(c) for c in configs):
        raise EvalRunError(f"{where}: `configs` must list the configurations and their results")
    trials = manifest.get("trials")
    if type(trials) is not int or trials < 1:
        raise EvalRunError(f"{where}: `trials` must be a count")
    return manifest


def _config_ok(config: object) -> bool:
    if not isinstance(config, dict):
        return False
    name, results = config.get("name"), config.get("results")
    return (
        isinstance(name, str)
        and isinstance(config.get("model"), str)
        and isinstance(results, str)
        and results.startswith("results-")
        and results.endswith(".jsonl")
        and "/" not in results
        and "\\" not in results
        and ".." not in results
    )


def read_cases(directory: Path) -> Iterator[Case]:
    """The run's cases in their order, a log at a time."""
    try:
        for _, _, cases in read_set(directory / CASES):
            yield from cases
    except EvalSetError as exc:
        raise EvalRunError(str(exc)) from None


class ResultsReader:
    """A configuration's results, read a line at a time; `at(offset)` reads one again (diff
    keeps each case's place in the file, not the case)."""

    def __init__(self, directory: Path, name: str) -> None:
        self.path = directory / name
        try:
            self._file = self.path.open("rb")
        except OSError as exc:
            raise EvalRunError(f"cannot read {self.path}: {exc.strerror}") from None

    def __iter__(self) -> Iterator[tuple[int, CaseResult]]:
        """(where its line starts, the case's result) for each line."""
        self._file.seek(0)
        number = 0
        while True:
            offset = self._file.tell()
            line = self._file.readline(LINE_BYTES + 1)
            if not line:
                return
            number += 1
            yield offset, self._parse(line, number)

    def at(self, offset: int) -> CaseResult:
        self._file.seek(offset)
        return self._parse(self._file.readline(LINE_BYTES + 1), None)

    def _parse(self, line: bytes, number: int | None) -> CaseResult:
        where = f"{self.path}" + (f", line {number}" if number is not None else "")
        if len(line) > LINE_BYTES:
            raise EvalRunError(f"{where}: a line over {LINE_BYTES:,} bytes")
        try:
            data = json.loads(line)
            _check_result(data)
            return CaseResult.unspooled(data)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise EvalRunError(f"{where}: not a case's results ({exc})") from None

    def close(self) -> None:
        self._file.close()


def _check_result(data: object) -> None:
    """What diff and rescore count on, in the types they count on (the rest is shown)."""
    if not isinstance(data, dict):
        raise ValueError("not an object")
    if not isinstance(data.get("id"), str) or data.get("feedback") not in (None, "beat", "keep"):
        raise ValueError("`id` must be a string and `feedback` null, beat or keep")
    for name in ("reference_kind", "reference_shown", "answer_shown"):
        if not isinstance(data.get(name), str):
            raise ValueError(f"`{name}` must be a string")
    trials, answers = data.get("trials"), data.get("answers")
    if not isinstance(trials, list) or not isinstance(answers, list):
        raise ValueError("`trials` and `answers` must be lists")
    for trial in trials:
        if not isinstance(trial, dict) or not isinstance(trial.get("problems"), list):
            raise ValueError("a trial must be an object with `problems`")
        if not all(isinstance(trial.get(f), bool) for f in ("valid", "same_kind", "passed")):
            raise ValueError("a trial's `valid`, `same_kind` and `passed` must be true or false")


class StoredAnswers:
    """Asks a case as `assistant eval rescore` does: each trial's answer is the one the saved
    run got, handed out as the runner takes the cases (`cases`), so no model is asked."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._waiting: dict[str, list[Answer]] = {}

    def model_of(self, case: Case) -> str | None:
        return None

    def cases(
        self, cases: Iterator[Case], results: ResultsReader, trials_of: Callable[[Case], int]
    ) -> Iterator[Case]:
        """The cases the run has results for (a run stopped early has fewer), each checked
        against its line of results."""
        stored = iter(results)
        for number, case in enumerate(cases, 1):
            found = next(stored, None)
            if found is None:
                return
            result = found[1]
            where = f"{results.path}, line {number}"
            if result.id != case.id:
                raise EvalRunError(f"{where}: case {result.id!r}, where the cases have {case.id!r}")
            if len(result.answers) != trials_of(case):
                raise EvalRunError(
                    f"{where}: {len(result.answers)} answers saved, the case has "
                    f"{trials_of(case)} trials"
                )
            try:
                answers = [answer_of(answer) for answer in result.answers]
            except ValueError as exc:
                raise EvalRunError(f"{where}: {exc}") from None
            self._waiting.setdefault(case.id, []).extend(answers)
            yield case
        if next(stored, None) is not None:
            raise EvalRunError(f"{results.path}: more results than the run has cases")

    async def ask(self, case: Case) -> Answer:
        answers = self._waiting[case.id]
        answer = answers.pop(0)
        if not answers:
            del self._waiting[case.id]
        return answer
