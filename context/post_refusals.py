"""Which `postMessage` entries of a log were not posted: the `Error:` entry that refuses one
names it (docs/log-format.md, "Tool calls and their results"). Read by the run (what an
answer has shown so far) and by whoever reads a log for what reached the thread (the demo)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from context.entry import Entry

REFUSED = "Error: the postMessage of entry {index} was not posted: {why}."
_REFUSED = re.compile(r"Error: the postMessage of entry (\d+) was not posted: ")


def refused_posts(entries: Sequence[Entry]) -> set[int]:
    """The indexes of postMessage entries that an `Error:` entry says were not posted."""
    found = (_REFUSED.match(e.content) for e in entries if isinstance(e.content, str))
    return {int(match.group(1)) for match in found if match}
