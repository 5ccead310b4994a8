"""Where an eval run's results wait for the table, `--json` and the report: an unnamed
temporary file of JSON lines, one a case, written as each case ends and read back one line
at a time, so 10,000 cases take the memory of one (docs/evaluation.md, "At scale").

Compared (`--against`), the report sets the cases the first configuration does worse on
first: the pairs are sorted once into one spool per difference in passes (at most 2k + 1),
then read back worst first, each in the cases' order."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Sequence
from typing import IO, Any

from assistant.eval.runner import CaseResult


class Spool:
    """Lines appended, then read back from the first as often as needed."""

    def __init__(self) -> None:
        # Unnamed, so gone with the process however it ends; closed by `close`.
        self._file: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self.count = 0

    def append(self, item: Any) -> None:
        self._file.seek(0, 2)
        self._file.write(json.dumps(item, ensure_ascii=False) + "\n")
        self.count += 1

    def __iter__(self) -> Iterator[Any]:
        self._file.flush()
        self._file.seek(0)
        for line in self._file:
            yield json.loads(line)

    def close(self) -> None:
        self._file.close()


class ResultSpool:
    """One configuration's results, in the cases' order."""

    def __init__(self) -> None:
        self._spool = Spool()

    def add(self, result: CaseResult) -> None:
        self._spool.append(result.spooled())

    def __iter__(self) -> Iterator[CaseResult]:
        for data in self._spool:
            yield CaseResult.unspooled(data)

    def close(self) -> None:
        self._spool.close()


class Rows:
    """Each case's results, one a configuration: in the cases' order, or compared, the cases
    where the first does worse than the second first, the worst first."""

    def __init__(self, spools: Sequence[ResultSpool]) -> None:
        self._spools = spools
        self._ordered: Spool | None = None
        if len(spools) == 2:
            self._ordered = self._worse_first()

    def __iter__(self) -> Iterator[list[CaseResult]]:
        if self._ordered is None:
            for row in zip(*self._spools, strict=True):
                yield list(row)
            return
        for pair in self._ordered:
            yield [CaseResult.unspooled(data) for data in pair]

    def _worse_first(self) -> Spool:
        by_difference: dict[int, Spool] = {}
        for first, second in zip(*self._spools, strict=True):
            # The same k trials on both sides: the difference in pass@1 is one in passes.
            difference = first.passes - second.passes
            if difference not in by_difference:
                by_difference[difference] = Spool()
            by_difference[difference].append([first.spooled(), second.spooled()])
        ordered = Spool()
        for difference in sorted(by_difference):
            bucket = by_difference[difference]
            for pair in bucket:
                ordered.append(pair)
            bucket.close()
        return ordered

    def close(self) -> None:
        if self._ordered is not None:
            self._ordered.close()
