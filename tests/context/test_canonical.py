import json

import pytest

from context.canonical import export_json, load_log
from context.entry import UserContent
from context.log import ContextLog, LogOrderError
from context.toolcalls import PostMessage
from context.validate import LogProblems
from tests.cli import DATA, ROOT

SEED = (DATA / "aya-lunch.json").read_bytes()
EXAMPLES = sorted((ROOT / "examples").glob("*.json"))


def test_seed_loads_with_its_string_turn_normalized():
    log = load_log(SEED)
    assert [e.turn for e in log.entries] == [0, 0, 1, 1]
    exported = export_json(log.entries)
    assert json.loads(exported)[0]["turn"] == 0
    assert '"turn": "0"' not in exported


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_export_load_export_is_byte_identical(path):
    once = export_json(load_log(path.read_bytes()).entries)
    twice = export_json(load_log(once.encode()).entries)
    assert once == twice
    assert once.endswith("\n") and "\\u" not in once


def test_canonical_key_order_and_compact_prompt():
    log = load_log(SEED)
    first_call = log.entries[2].canonical_json()
    assert first_call == (
        '{"index":2,"turn":1,"timestamp":"2025-04-04T12:34:00Z","role":"assistant",'
        '"content":{"toolCall":"getThreadHistory","ascending":false,'
        '"reasoning":"Checking the thread history for more context"}}'
    )
    assert "dê uma sugestão" in log.prompt_text()
    assert json.loads(log.prompt_text()) == [e.as_dict() for e in log.entries]


def test_prompt_after_append_extends_the_previous_prompt():
    log = load_log(SEED)
    before = log.prompt_text()
    log.append(UserContent(userid="<@U1>", text='tricky "}] \\ text'), "2025-04-04T12:36:00Z")
    after = log.prompt_text()
    assert after.startswith(before[:-1])
    assert log.entries[-1].turn == 2


def test_add_refuses_a_misplaced_entry():
    source = ContextLog()
    source.append("hi", "2025-01-01T00:00:00Z")
    entry = source.append(PostMessage(text="x"), "2025-01-01T00:00:00Z")
    with pytest.raises(LogOrderError, match="expected index 0"):
        ContextLog([entry])


def test_load_log_raises_with_every_problem():
    with pytest.raises(LogProblems) as caught:
        load_log(b'[{"index": 1}]')
    text = str(caught.value)
    assert "entry 0, turn" in text and "entry 0, index" in text
