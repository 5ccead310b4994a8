"""Bad and odd input (docs/log-format.md#peoples-messages): the validator never crashes, and any
text a person can send is recorded so that the prompt's JSON gives back exactly that text."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from context.canonical import export_json, load_log
from context.entry import UserContent
from context.log import ContextLog
from context.storage import ThreadKey
from context.validate import validate_log

STAMP = "2025-04-04T12:33:00Z"
KEY = ThreadKey("T0FUZZ", "C0FUZZ", "1743769980.000100")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
# Entries that are nearly right: the real keys with values of any type.
near_entries = st.fixed_dictionaries(
    {},
    optional={
        "index": st.integers(-2, 5) | json_values,
        "turn": st.integers(-1, 5) | st.sampled_from(["0", "1", "x"]) | json_values,
        "timestamp": st.sampled_from([STAMP, "2025-13-01T00:00:00Z", ""]) | json_values,
        "role": st.sampled_from(["user", "assistant", "system", "tool"]) | json_values,
        "content": json_values
        | st.fixed_dictionaries(
            {"toolCall": st.sampled_from(["postMessage", "finishRequest", "nope"])},
            optional={"reasoning": json_values, "text": json_values},
        ),
    },
)
# What people paste: JSON breakers, backslashes, control characters, emoji, right-to-left text.
odd_text = st.lists(
    st.text(st.characters(codec="utf-8"), max_size=20)
    | st.sampled_from(['"}]', "\\", "\\u0000", "\x00", "\x1b", "\u202e", "שלום", "🙂‍↔️", "\r\n"]),
    max_size=12,
).map("".join)


@settings(max_examples=300)
@given(st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()))
def test_the_validator_reports_never_raises_on_any_document(data):
    report = validate_log(data)
    assert report.problems or report.entries or data.strip() == b"[]"


@settings(max_examples=300)
@given(st.lists(near_entries, max_size=5))
def test_the_validator_names_a_position_and_field_for_every_problem(items):
    report = validate_log(json.dumps(items))
    for problem in report.problems:
        assert problem.entry is None or 0 <= problem.entry < len(items)
        assert problem.field
    if not report.problems:  # what it accepts loads and round-trips
        text = export_json(report.entries)
        assert export_json(load_log(text).entries) == text


@settings(max_examples=200)
@given(st.lists(odd_text, min_size=1, max_size=6))
def test_odd_text_comes_back_exactly_from_the_prompt(texts):
    log = ContextLog()
    log.append("persona", STAMP)
    for text in texts:
        log.append(UserContent(userid="<@U0ANA>", text=text), STAMP)
    parsed = json.loads(log.prompt_text())
    assert [entry["content"]["text"] for entry in parsed[1:]] == texts
    assert load_log(log.prompt_text()).prompt_text() == log.prompt_text()


# One store for all examples: each appends to the same thread, which is what a thread does.
@settings(
    max_examples=25,
    suppress_health_check=[
        *settings.default.suppress_health_check,  # the suite's (tests/conftest.py)
        HealthCheck.function_scoped_fixture,
    ],
)
@given(odd_text)
def test_odd_text_comes_back_exactly_from_the_store(store, text):
    appended = store.append(KEY, UserContent(userid="<@U0ANA>", text=text), STAMP)
    stored = store.entries(KEY)[appended.index]
    assert stored.content == UserContent(userid="<@U0ANA>", text=text)
