"""The Protocols of what evaluation keeps in the store: eval runs with an id (`EvalRunStore`)
and live answers' verdicts (`VerdictStore`). Part of `Store` (`context.storage.base`). The
store keeps the eval's JSON as text and never reads into it: its format is
assistant/eval/runs.py's."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Protocol

from context.storage.values import (
    EvalRunRow,
    JudgeCall,
    ThreadKey,
    VerdictCount,
    VerdictRow,
)


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


class VerdictStore(Protocol):
    """Live answers judged: a side record of the thread, one row per answer (the index of its
    post), never read into a prompt."""

    def claim_judging(
        self, key: ThreadKey, answer: int, model: str | None, judge_model: str
    ) -> bool:
        """The answer taken to be judged, once: False when it was taken before (by this
        process or another, before a restart), or the thread is not in the store."""
        ...

    def record_verdict(self, key: ThreadKey, answer: int, judged: JudgeCall) -> None:
        """What the judge said of a claimed answer, and its call's figures."""
        ...

    def verdict_counts(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> list[VerdictCount]:
        """The verdicts given at or after `since` and before `until`, counted by channel,
        answering model, judge model and verdict."""
        ...

    def recent_verdicts(self, limit: int, since: datetime | None = None) -> list[VerdictRow]:
        """The newest `limit` verdicts (at or after `since`), newest first."""
        ...
