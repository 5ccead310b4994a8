"""Approvals (docs/slack-features.md#approvals): a tool call that waits for a person. The
entries and their texts, the message and its buttons, grants' entries (`entries.py`), asking
(by the MCP file's approvers, in the thread or an approvals channel), using a grant instead,
and settling in a run (`asking.py`), and the calls a stopped run left without a result
(`unfinished.py`). The click comes in through `assistant/intake/approvals.py`; a stop ends
the wait in `run/stopping/stop.py`.

May import: `run.core`, `run.channels`."""
