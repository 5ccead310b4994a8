"""Property tests: the turn/index rules, round trips and the prompt-prefix property."""

import json
from datetime import datetime

from hypothesis import given
from hypothesis import strategies as st

from context.canonical import export_json, load_log
from context.entry import UserContent
from context.log import ContextLog
from context.toolcalls import FinishRequest, GetThreadHistory, PostMessage

text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
contents = st.one_of(
    text.map(str),
    st.builds(UserContent, userid=st.sampled_from(["<@U1>", "<@U2>"]), text=text),
    st.builds(PostMessage, text=text.filter(bool), reasoning=st.none() | text),
    st.builds(
        GetThreadHistory,
        ascending=st.booleans(),
        limit=st.none() | st.integers(1, 200),
        reasoning=st.none() | text,
    ),
    st.builds(FinishRequest, reasoning=st.none() | text),
)
timestamps = st.datetimes(datetime(2000, 1, 1), datetime(2100, 1, 1)).map(
    lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")
)


def expected_turns(roles):
    """The turn rule (docs/log-format.md#index-and-turn), written out independently of `Tail`."""
    turns, turn, last = [], 0, None
    for role in roles:
        if role != "system":
            if last is not None and role != last:
                turn += 1
            last = role
        turns.append(turn)
    return turns


@given(st.lists(st.tuples(contents, timestamps), max_size=30))
def test_appends_place_entries_by_the_rules(items):
    log = ContextLog()
    for content, stamp in items:
        log.append(content, stamp)
    assert [e.index for e in log.entries] == list(range(len(items)))
    assert [e.turn for e in log.entries] == expected_turns([e.role for e in log.entries])


@given(st.lists(st.tuples(contents, timestamps), max_size=30))
def test_serialization_round_trips(items):
    log = ContextLog()
    for content, stamp in items:
        log.append(content, stamp)
    exported = export_json(log.entries)
    reloaded = load_log(exported)
    assert list(reloaded.entries) == list(log.entries)
    assert reloaded.prompt_text() == log.prompt_text()
    assert json.loads(log.prompt_text()) == json.loads(exported)


@given(st.lists(st.tuples(contents, timestamps), min_size=1, max_size=30))
def test_each_prompt_starts_with_the_previous_one(items):
    log = ContextLog()
    previous = log.prompt_text()
    for content, stamp in items:
        log.append(content, stamp)
        current = log.prompt_text()
        assert current.startswith(previous[:-1])
        previous = current
