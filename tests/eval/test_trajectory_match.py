"""Trajectory match (pure): the four modes on tool names and on arguments, how a log is cut
into trajectory cases, and which recorded result a call gets."""

from __future__ import annotations

import pytest

from assistant.eval.trajectory import (
    MODES,
    NOT_AVAILABLE,
    Match,
    RecordedTools,
    arguments_of,
    matches,
    trajectory_cases,
)
from context.entry import UserContent
from context.log import ContextLog
from context.toolcalls import (
    ExpandEntry,
    FinishRequest,
    GetThreadHistory,
    PostMessage,
    ServerToolCall,
)

READ = GetThreadHistory(reasoning="context")
READ_5 = GetThreadHistory(limit=5, reasoning="fewer")
POST = PostMessage(text="Risotto.", reasoning="answer")
OTHER_POST = PostMessage(text="Noodles, really.", reasoning="another answer")
DONE = FinishRequest()
TOOL = ServerToolCall.model_validate({"toolCall": "releases__checklist", "release": "2.4"})
TOOL_25 = ServerToolCall.model_validate({"toolCall": "releases__checklist", "release": "2.5"})

REFERENCE = [READ, POST, DONE]


@pytest.mark.parametrize(
    ("candidate", "strict", "unordered", "subset", "superset"),
    [
        ([READ, POST, DONE], True, True, True, True),
        ([POST, READ, DONE], False, True, True, True),  # another order
        ([POST, DONE], False, False, True, False),  # less: nothing the reference lacks
        ([READ, READ, POST, DONE], False, False, False, True),  # more: every call made
        ([TOOL, POST, DONE], False, False, False, False),  # another tool instead
        ([READ, POST], False, False, True, False),  # no finishRequest
    ],
)
def test_each_mode_on_tool_names(candidate, strict, unordered, subset, superset):
    found = [matches(REFERENCE, candidate, Match(mode)) for mode in MODES]
    assert found == [strict, unordered, subset, superset]


def test_arguments_count_only_when_asked_and_never_a_post_s_text():
    candidate = [READ_5, OTHER_POST, DONE]
    for mode in MODES:
        assert matches(REFERENCE, candidate, Match(mode))
        assert not matches(REFERENCE, candidate, Match(mode, arguments=True))
    # Its text and its reasoning aside, a post is the same call.
    assert matches(REFERENCE, [READ, OTHER_POST, DONE], Match("strict", arguments=True))
    # The limit as the run applies it: none is the default 20.
    assert arguments_of(GetThreadHistory(limit=20)) == arguments_of(READ)
    assert matches([TOOL], [TOOL_25], Match("strict"))
    assert not matches([TOOL], [TOOL_25], Match("strict", arguments=True))


def test_a_call_is_counted_as_often_as_it_is_made():
    twice = [READ, READ, POST, DONE]
    assert not matches(twice, [READ, POST, DONE], Match("unordered"))
    assert matches(twice, [READ, POST, DONE], Match("subset"))
    assert not matches(twice, [READ, POST, DONE], Match("superset"))


def log_of(*contents) -> list:
    log = ContextLog()
    for number, content in enumerate(contents):
        log.append(content, f"2025-04-04T12:{number:02d}:00Z")
    return list(log.entries)


def ask(text: str) -> UserContent:
    return UserContent(userid="<@U0ASKER>", text=text)


def test_a_case_per_answered_message_its_whole_answer_the_reference():
    entries = log_of(
        "You are Aya.",  # 0
        ask("lunch?"),  # 1
        READ,  # 2
        "Thread history (1 message): lunch?",  # 3
        POST,  # 4
        DONE,  # 5
        ask("thanks"),  # 6: not answered
        ask("and dessert?"),  # 7
        TOOL,  # 8
        "Tiramisu.",  # 9
        POST,  # 10
    )
    cases = list(trajectory_cases("log.json", entries))
    assert [(case.at, [e.index for e in case.reference]) for case in cases] == [
        (2, [2, 4, 5]),
        (8, [8, 10]),
    ]


def test_reads_and_tools_get_the_recorded_result_of_the_same_call_else_not_available():
    entries = log_of(
        "You are Aya.",
        ask("what's left for 2.4?"),
        READ,
        "Thread history (1 message): what's left?",
        ExpandEntry(index=1),
        "Entry 1 in full",
        TOOL,
        "1. the migration",
        POST,
        DONE,
    )
    [case] = trajectory_cases("log.json", entries)
    tools = RecordedTools(case)
    assert tools.result(GetThreadHistory(reasoning="other words")) == entries[3].content
    assert tools.result(ExpandEntry(index=1)) == "Entry 1 in full"
    assert tools.result(TOOL) == "1. the migration"
    for other in (READ_5, ExpandEntry(index=0), TOOL_25):
        assert tools.result(other) == NOT_AVAILABLE.format(name=other.called)
