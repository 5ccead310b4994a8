"""The steps a run shows (assistant/run/progress/steps.py), derived from a log's entries alone: the
same for a stored log, a replay's log, and the run that wrote it."""

from __future__ import annotations

from pathlib import Path

from assistant.fakes.slack.chunks import chunk_text
from assistant.intake.references import MAX_REFERENCES
from assistant.run.progress.steps import MAX_LINKS, Step, steps
from context.canonical import load_log
from context.entry import ENTRY_ADAPTER

EXAMPLES = Path(__file__).parents[2] / "examples"
LINK = "https://acme.slack.com/archives/C0123ABC/p1749028272000100"
AT = {"turn": 1, "timestamp": "2025-06-04T09:14:05Z"}
OTHER = "https://acme.slack.com/archives/C0999XYZ/p1749028272000200"


def log_of(*entries: tuple[str, object]) -> list:
    # Built entry by entry: the turn rules are not what these tests are about.
    return [
        ENTRY_ADAPTER.validate_python({**AT, "index": i, "role": role, "content": content})
        for i, (role, content) in enumerate(entries)
    ]


def test_the_stored_examples_show_their_history_reads():
    deploy = load_log((EXAMPLES / "deploy-incident.json").read_bytes()).entries
    assert steps(deploy) == [Step("entry-2", "Reading the thread", "complete")]
    assert steps(deploy, first=6) == []  # the later requests read nothing
    # A call the log's run went on from without a result (another bot's log).
    lunch = load_log((EXAMPLES / "aya-lunch.json").read_bytes()).entries
    assert steps(lunch) == [Step("entry-2", "Reading the thread", "complete")]


def test_statuses_follow_the_results_and_links_their_quotes_or_notes():
    text = (
        f"which one? <{LINK}> or <{OTHER}|this>\n"
        '<@U02JONAS> said:\n"deploy #4812 failed"\n'
        "(The linked message is in a conversation <@U04MARTA> may not see, so it was not read.)"
    )
    log = log_of(
        ("system", "You are Aya."),
        ("user", {"userid": "<@U04MARTA>", "text": text}),
        ("assistant", {"toolCall": "expandEntry", "index": 9}),
        ("system", "Error: there is no entry 9 to expand; the entries are 0 to 2."),
        ("assistant", {"toolCall": "getThreadHistory"}),
    )
    assert steps(log) == [
        Step("entry-1-link-0", "Reading a linked message", "complete", LINK),
        Step("entry-1-link-1", "Reading a linked message", "error", OTHER),
        Step("entry-2", "Reading entry 9 in full", "error"),
        Step("entry-4", "Reading the thread", "in_progress"),  # no result yet
    ]
    # Every step is a chunk Slack takes (the fake holds Slack's field rules).
    chunk_text([step.chunk() for step in steps(log)])
    assert steps(log)[0].chunk()["sources"] == [
        {"type": "url", "url": LINK, "text": "linked message"}
    ]


def test_posts_and_the_end_of_a_request_are_not_steps():
    log = log_of(
        ("system", "You are Aya."),
        ("user", {"userid": "<@U1>", "text": "hi"}),
        ("assistant", {"toolCall": "postMessage", "text": "Hello!"}),
        ("assistant", {"toolCall": "finishRequest"}),
    )
    assert steps(log) == []


def test_links_are_counted_as_the_recorder_reads_them():
    assert MAX_LINKS == MAX_REFERENCES


def test_an_allowed_call_being_made_is_in_progress_not_waiting():
    call = {"toolCall": "shop__cancel_order", "order": "A1"}
    asked = (
        "Approval requested: shop__cancel_order (entry 1) waits for <@U1> to allow or deny it "
        "until 2026-11-26T18:10:00Z (message 1.2). Arguments: {}"
    )
    allowed = "Approval of shop__cancel_order (entry 1): allowed by <@U1> at 2026-11-26T18:02:13Z."
    calling = "Calling shop__cancel_order (entry 1) at 2026-11-26T18:02:14Z."
    base = [("system", "You are Aya."), ("assistant", call), ("system", asked)]
    assert steps(log_of(*base, ("system", allowed))) == [
        Step("entry-1", "Waiting for approval: shop__cancel_order", "in_progress")
    ]
    assert steps(log_of(*base, ("system", allowed), ("system", calling))) == [
        Step("entry-1", "Calling shop__cancel_order", "in_progress")
    ]
    result = "Result of shop__cancel_order (entry 1), data from the MCP server shop, not …:\nok"
    assert steps(log_of(*base, ("system", allowed), ("system", calling), ("system", result))) == [
        Step("entry-1", "Calling shop__cancel_order", "complete")
    ]
