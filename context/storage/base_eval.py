"""The Protocol of what evaluation keeps in the store: eval runs with an id (`EvalRunStore`).
Part of `Store` (`context.storage.base`). The store keeps the eval's JSON as text and never
reads into it: its format is assistant/eval/runs.py's."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from context.storage.values import EvalRunRow


class EvalRunStore(Protocol):
    """Eval runs: begun (`begin_eval_run`), filled a batch at a time, finished with their
    manifest; listed, read back a row at a time, and deleted."""

    def begin_eval_run(self, label: str) -> int:
        """A new run, its id."""
        ...

    def add_eval_run_logs(self, run_id: int, documents: Sequence[tuple[int, str]]) -> None:
        """The run's logs (number from 1, the log file's JSON), in one transaction."""
        ...

    def add_eval_run_results(self, run_id: int, rows: Sequence[tuple[int, int, str]]) -> None:
        """Results: (configuration, the case's number from 1, its line), in one transaction."""
        ...

    def finish_eval_run(self, run_id: int, manifest: str) -> None: ...

    def eval_runs(self) -> list[EvalRunRow]:
        """Every run, newest first."""
        ...

    def eval_run(self, run_id: int) -> EvalRunRow | None: ...

    def eval_run_logs(self, run_id: int) -> Iterator[str]:
        """The run's logs in their order, read a page at a time."""
        ...

    def eval_run_results(self, run_id: int, config: int) -> Iterator[tuple[int, str]]:
        """A configuration's results in the cases' order, (number, line), a page at a time."""
        ...

    def eval_run_result(self, run_id: int, config: int, number: int) -> str | None:
        """One case's line."""
        ...

    def delete_eval_run(self, run_id: int) -> bool:
        """The run and everything it kept; False when there was no such run."""
        ...
