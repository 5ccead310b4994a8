"""The spooled results of `assistant eval`: read back as they were written, and compared,
the cases the first configuration does worse on first, each group in the cases' order."""

from __future__ import annotations

from assistant.eval.runner import CaseResult
from assistant.eval.scores import Trial
from assistant.eval.spool import ResultSpool, Rows


def result(number: int, passes: int, k: int = 2) -> CaseResult:
    trials = [
        Trial("post", True, True, n < passes, () if n < passes else ("a post over the caps",))
        for n in range(k)
    ]
    return CaseResult(number, f"log.json@{number}", None, "post", "📤 recorded", trials, "📤 new")


def spooled(results: list[CaseResult]) -> ResultSpool:
    spool = ResultSpool()
    for item in results:
        spool.add(item)
    return spool


def test_a_spool_gives_back_what_it_was_given_as_often_as_read():
    given = [result(0, 2), result(1, 0), result(2, 1)]
    spool = spooled(given)
    try:
        assert list(spool) == given
        assert list(spool) == given
    finally:
        spool.close()


def test_compared_rows_come_worse_first_then_in_the_cases_order():
    # Passes (of 2) under the first configuration and the second, case by case.
    first = spooled([result(n, p) for n, p in enumerate([2, 0, 1, 2, 0, 1])])
    second = spooled([result(n, p) for n, p in enumerate([2, 2, 2, 0, 1, 1])])
    rows = Rows([first, second])
    try:
        order = [row[0].number for row in rows]
        assert order == [1, 2, 4, 0, 5, 3]  # -2, -1, -1, 0, 0, +2
        assert [r.passes for r in next(iter(rows))] == [0, 2]
        alone = Rows([first])
        assert [row[0].number for row in alone] == [0, 1, 2, 3, 4, 5]
    finally:
        rows.close()
        first.close()
        second.close()
