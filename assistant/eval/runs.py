"""Saved eval runs (`assistant eval --save-run DIR`): everything a run asked and got, kept to
be scored again (`assistant eval rescore`) and compared (`assistant eval diff`) without asking
the model again (docs/evaluation.md, "Saved runs"). Written and read a case at a time:

    manifest.json      {"format": "assistant-eval-run", "version": 1, "trials": 1,
                        "trials_beat": null, "judge": null, "stopped": null,
                        "configs": [{"name", "model", …, "tool_mode", "results": "results-1.jsonl",
                                     "summary": {…}}]}
    cases/             the run's cases, an eval set (`assistant/eval/sets.py`)
    results-1.jsonl    a line a case, in the cases' order: its trials' scores and answers

Every run is also kept in the store with an id (`StoredRunWriter`, the tables of migration
0023_eval_runs: the same manifest, log files and result lines as text), unless `--no-store`.
Rescore and diff read either through one interface, `SavedRun` (`DirectoryRun`,
`StoredRun`), so a run on disk and a run in the store are scored and compared by the same
code.

Keys and tokens (`context/redaction.py`'s secrets) are replaced in every file by stable
placeholders, the same in a log and in an answer, so scoring again finds the same texts; no
key to undo it is written. The manifest is written last: a run cut short has none."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

from assistant.eval.ask import Answer, Config
from assistant.eval.cases import Case
from assistant.eval.report import Run
from assistant.eval.runner import CaseResult, answer_of
from assistant.eval.sets import EvalSetError, SetWriter, log_document, log_of_document, read_set
from assistant.settings.input_files import read_bounded
from context.entry import Entry
from context.redaction import Redactor
from context.storage import EvalRunStore

FORMAT = "assistant-eval-run"
VERSION = 1
MANIFEST = "manifest.json"
CASES = "cases"
LINE_BYTES = 16 * 1024 * 1024  # a case's line: its trials' answers, each within a reply's size
BATCH = 200  # result lines written to the store in one transaction
LABEL_CHARS = 500  # what `assistant eval runs` shows of a run's inputs


class EvalRunError(ValueError):
    """A saved run that cannot be read or written; the message names the file."""


def is_saved_run(path: Path) -> bool:
    return (path / MANIFEST).is_file() and (path / CASES).is_dir()


class ResultsSink(Protocol):
    def add(self, result: CaseResult) -> None: ...


class RunSink(Protocol):
    """Where a run is kept: its logs first (`add_log`, `end_cases`), each configuration's
    results as they end (`results`), the manifest last (`finish`)."""

    def add_log(self, source: str, entries: list[Entry], cases: list[Case]) -> None: ...

    def end_cases(self) -> object: ...

    def results(self, number: int) -> ResultsSink: ...

    def finish(self, manifest: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class KeptRun:
    """A run kept in each of its sinks (the store, a directory, or both), its logs read once."""

    def __init__(self) -> None:
        self.sinks: list[RunSink] = []
        self.stored: StoredRunWriter | None = None

    def add(self, sink: RunSink) -> None:
        self.sinks.append(sink)
        if isinstance(sink, StoredRunWriter):
            self.stored = sink

    def write_cases(self, logs: Iterable[tuple[str, list[Entry], list[Case]]]) -> None:
        for source, entries, cases in logs:
            for sink in self.sinks:
                sink.add_log(source, entries, cases)
        for sink in self.sinks:
            sink.end_cases()

    def results(self, number: int) -> ResultsSink:
        return _AllResults([sink.results(number) for sink in self.sinks])

    def finish(self, manifest: dict[str, Any]) -> None:
        for sink in self.sinks:
            sink.finish(manifest)

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()


class _AllResults:
    def __init__(self, sinks: list[ResultsSink]) -> None:
        self._sinks = sinks

    def add(self, result: CaseResult) -> None:
        for sink in self._sinks:
            sink.add(result)


class RunWriter:
    """Writes a run in a new directory: its cases first (`write_cases`, or `add_log` then
    `end_cases`), each configuration's results as they end (`results`), the manifest last
    (`finish`)."""

    def __init__(self, directory: Path) -> None:
        if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
            raise EvalRunError(f"{directory}: exists and is not an empty directory")
        self.directory = directory
        self._redactor = Redactor(kinds=("SECRET",))
        self._files: list[IO[str]] = []
        self._set: SetWriter | None = None

    def write_cases(self, logs: Iterable[tuple[str, list[Entry], list[Case]]]) -> int:
        for source, entries, cases in logs:
            self.add_log(source, entries, cases)
        return self.end_cases()

    def add_log(self, source: str, entries: list[Entry], cases: list[Case]) -> None:
        try:
            if self._set is None:
                self._set = SetWriter(self.directory / CASES)
            redacted = [self._redactor.entry(entry) for entry in entries]
            self._set.add(self._redactor.text(source), redacted, cases)
        except EvalSetError as exc:
            raise EvalRunError(str(exc)) from None

    def end_cases(self) -> int:
        try:
            if self._set is None:
                self._set = SetWriter(self.directory / CASES)
            self._set.finish({"redacted": "secrets"})
        except EvalSetError as exc:
            raise EvalRunError(str(exc)) from None
        return self._set.cases

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


class StoredRunWriter:
    """Keeps a run in the store (`EvalRunStore`): the same documents as a directory's, its
    secrets replaced the same way, written a batch at a time; the manifest last, so a run cut
    short is listed as unfinished."""

    def __init__(self, store: EvalRunStore, label: str) -> None:
        self._store = store
        self._redactor = Redactor(kinds=("SECRET",))
        self.id = store.begin_eval_run(self._redactor.text(label)[:LABEL_CHARS])
        self._logs = 0
        self._pending: list[tuple[int, int, str]] = []
        self._finished = False

    def add_log(self, source: str, entries: list[Entry], cases: list[Case]) -> None:
        if not cases:
            return  # as a set keeps only the logs with cases
        self._logs += 1
        redacted = [self._redactor.entry(entry) for entry in entries]
        document = log_document(self._redactor.text(source), redacted, cases)
        # A log at a time: a log can be megabytes, a batch of them would be held whole.
        self._store.add_eval_run_logs(self.id, [(self._logs, json.dumps(document))])

    def end_cases(self) -> None:
        pass

    def results(self, number: int) -> ResultsSink:
        return _StoredResults(self, number)

    def add_line(self, config: int, number: int, line: str) -> None:
        self._pending.append((config, number, line))
        if len(self._pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        pending, self._pending = self._pending, []
        self._store.add_eval_run_results(self.id, pending)

    def finish(self, manifest: dict[str, Any]) -> None:
        self.flush()
        document = {"format": FORMAT, "version": VERSION, **self._redactor.value(manifest)}
        self._store.finish_eval_run(self.id, json.dumps(document, ensure_ascii=False))
        self._finished = True

    def close(self) -> None:
        if not self._finished:
            self.flush()  # a run cut short keeps what it had, listed as unfinished


class _StoredResults:
    def __init__(self, writer: StoredRunWriter, config: int) -> None:
        self._writer, self._config, self._count = writer, config, 0

    def add(self, result: CaseResult) -> None:
        self._count += 1
        line = json.dumps(self._writer._redactor.value(result.spooled()), ensure_ascii=False)
        self._writer.add_line(self._config, self._count, line)


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
    return check_manifest(manifest, str(where))


def check_manifest(manifest: object, where: str) -> dict[str, Any]:
    """A manifest read from a directory or the store, checked (`where` names it)."""
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


class Results(Protocol):
    """A configuration's results, read a case at a time: (a key to read it again by, the
    case's result) in the cases' order; `at(key)` reads one again (diff keeps each case's key,
    not the case). `where` names them in errors."""

    where: str

    def __iter__(self) -> Iterator[tuple[int, CaseResult]]: ...

    def place(self, number: int) -> str:
        """The case numbered `number` (from 1), as an error names it."""
        ...

    def at(self, key: int) -> CaseResult: ...

    def close(self) -> None: ...


class SavedRun(Protocol):
    """A kept run, on disk or in the store: its checked manifest, its logs with their cases,
    and each configuration's results (`results(1)`, `results(2)` with --against)."""

    name: str
    manifest: dict[str, Any]

    def logs(self) -> Iterator[tuple[str, list[Entry], list[Case]]]: ...

    def results(self, number: int) -> Results: ...


class DirectoryRun:
    """A run saved with `--save-run DIR`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.name = str(directory)
        self.manifest = read_manifest(directory)

    def logs(self) -> Iterator[tuple[str, list[Entry], list[Case]]]:
        try:
            yield from read_set(self.directory / CASES)
        except EvalSetError as exc:
            raise EvalRunError(str(exc)) from None

    def results(self, number: int) -> Results:
        return ResultsReader(self.directory, self.manifest["configs"][number - 1]["results"])


class StoredRun:
    """A run kept in the store, by its id."""

    def __init__(self, store: EvalRunStore, run_id: int) -> None:
        self._store, self.id = store, run_id
        self.name = f"run {run_id}"
        row = store.eval_run(run_id)
        if row is None:
            raise EvalRunError(f"no eval run {run_id} in the store (see `assistant eval runs`)")
        if row.manifest is None:
            raise EvalRunError(f"eval run {run_id} did not finish: it has no manifest to read")
        try:
            manifest = json.loads(row.manifest)
        except ValueError as exc:
            raise EvalRunError(f"eval run {run_id}: not a run's manifest ({exc})") from None
        self.manifest = check_manifest(manifest, f"eval run {run_id}")

    def logs(self) -> Iterator[tuple[str, list[Entry], list[Case]]]:
        for number, text in enumerate(self._store.eval_run_logs(self.id), 1):
            where = f"eval run {self.id}, log {number}"
            try:
                yield log_of_document(json.loads(text), where)
            except ValueError as exc:  # EvalSetError too
                shown = str(exc) if where in str(exc) else f"{where}: {exc}"
                raise EvalRunError(shown) from None

    def results(self, number: int) -> Results:
        return StoredResultsReader(self._store, self.id, number)


def read_cases(run: SavedRun) -> Iterator[Case]:
    """The run's cases in their order, a log at a time."""
    for _, _, cases in run.logs():
        yield from cases


class StoredResultsReader:
    """A configuration's results in the store; a case's key is its number."""

    def __init__(self, store: EvalRunStore, run_id: int, config: int) -> None:
        self._store, self._id, self._config = store, run_id, config
        self.where = f"eval run {run_id}, configuration {config}"

    def __iter__(self) -> Iterator[tuple[int, CaseResult]]:
        for number, line in self._store.eval_run_results(self._id, self._config):
            yield number, parse_result(line.encode("utf-8"), self.place(number))

    def place(self, number: int) -> str:
        return f"{self.where}, case {number}"

    def at(self, key: int) -> CaseResult:
        line = self._store.eval_run_result(self._id, self._config, key)
        if line is None:
            raise EvalRunError(f"{self.where}: no case {key}")
        return parse_result(line.encode("utf-8"), self.place(key))

    def close(self) -> None:
        pass


class ResultsReader:
    """A configuration's results in a file, read a line at a time; a case's key is where its
    line starts."""

    def __init__(self, directory: Path, name: str) -> None:
        self.path = directory / name
        self.where = str(self.path)
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

    def place(self, number: int) -> str:
        return f"{self.path}, line {number}"

    def _parse(self, line: bytes, number: int | None) -> CaseResult:
        where = self.place(number) if number is not None else f"{self.path}"
        return parse_result(line, where)

    def close(self) -> None:
        self._file.close()


def parse_result(line: bytes, where: str) -> CaseResult:
    """A case's line of results, checked (`where` names it in the error)."""
    if len(line) > LINE_BYTES:
        raise EvalRunError(f"{where}: a line over {LINE_BYTES:,} bytes")
    try:
        data = json.loads(line)
        _check_result(data)
        return CaseResult.unspooled(data)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise EvalRunError(f"{where}: not a case's results ({exc})") from None


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
        self, cases: Iterator[Case], results: Results, trials_of: Callable[[Case], int]
    ) -> Iterator[Case]:
        """The cases the run has results for (a run stopped early has fewer), each checked
        against its line of results."""
        stored = iter(results)
        for number, case in enumerate(cases, 1):
            found = next(stored, None)
            if found is None:
                return
            result = found[1]
            where = results.place(number)
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
            raise EvalRunError(f"{results.where}: more results than the run has cases")

    async def ask(self, case: Case) -> Answer:
        answers = self._waiting[case.id]
        answer = answers.pop(0)
        if not answers:
            del self._waiting[case.id]
        return answer
