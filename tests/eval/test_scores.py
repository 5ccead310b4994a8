"""The pure parts of eval: where a log's decisions are, the Wilson interval, a set's cases
checked."""

from __future__ import annotations

import json

import pytest

from assistant.eval.cases import case_of_json, cases_of, decisions
from assistant.eval.language import language_of
from assistant.eval.scores import wilson
from context.canonical import load_log
from tests.eval.logs import log_json


def test_without_metadata_each_run_of_tool_calls_is_one_decision():
    entries = list(load_log(log_json()).entries)
    assert decisions(entries, None) == [[2], [4, 5]]
    assert [case.id for case in cases_of("f.json", entries)] == ["f.json@2", "f.json@4"]


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    # Worked by hand from the formula (z = 1.96); at 0 of n the upper bound is z²/(n + z²).
    [(0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (5, 6, 0.4365, 0.9699), (1, 2, 0.0945, 0.9055)],
)
def test_wilson_interval(successes, trials, low, high):
    got = wilson(successes, trials)
    assert got == pytest.approx((low, high), abs=1e-4)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ([], "a case must be an object"),
        ({"at": 0, "reference": [0]}, "`at` must be an entry index from 1 to 5"),
        ({"at": 2, "reference": [3]}, "increasing indexes"),
        ({"at": 4, "reference": [4, 4]}, "increasing indexes"),
        ({"at": 3, "reference": [3]}, "not a tool call"),
        ({"at": 2, "reference": [2], "feedback": "meh"}, "`feedback` must be"),
        ({"at": True, "reference": [2]}, "`at` must be"),
    ],
)
def test_a_set_s_case_is_checked(data, said):
    entries = list(load_log(log_json()).entries)
    with pytest.raises(ValueError, match=said):
        case_of_json("f.json", entries, json.loads(json.dumps(data)))


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Oi, me dê uma sugestão de almoço, <@U0BOB> e eu vamos juntos.", "pt"),
        ("Thanks! What should we check before we ship?", "en"),
        ("¿Qué podemos comer hoy en la oficina?", "es"),
        ("Was sollen wir heute essen? Ich habe Hunger.", "de"),
        ("Привет, как дела?", "cyrillic"),
        ("今日は何を食べますか", "ja"),
        ("Pizza!", None),  # too little to tell: the check is left out
        ("<@U0BOB> https://example.com/the/is/and", None),  # mentions and links say nothing
    ],
)
def test_the_language_guess(text, language):
    assert language_of(text) == language
