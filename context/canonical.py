"""Reading and writing whole logs as JSON documents (docs/log-format.md#canonical-json)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from context.entry import Entry
from context.log import ContextLog
from context.validate import LogProblems, validate_log


def load_log(data: bytes | str) -> ContextLog:
    """Load a saved log, accepting the seed's digit-string turns; raise `LogProblems` listing
    every problem when the document is not a valid log."""
    report = validate_log(data)
    if report.problems:
        raise LogProblems(report.problems)
    return ContextLog(report.entries)


def export_json(entries: Iterable[Entry]) -> str:
    """The log for people: canonical key order, 2-space indent, UTF-8 text, final newline."""
    return json.dumps([e.as_dict() for e in entries], ensure_ascii=False, indent=2) + "\n"
