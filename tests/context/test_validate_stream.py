"""Validation reads a log an entry at a time (issue 43, point 17: a 57 MiB log took 12 s and
about 1 GB): it finds exactly what reading the whole document found, every problem in the
same words, and holds no more than a few entries' objects while it reads. Speed is measured in
bench/ (`python -m bench big_log`); here the bytes held, deterministically."""

from __future__ import annotations

import json
import tracemalloc
from datetime import datetime
from itertools import product

from hypothesis import given, settings
from hypothesis import strategies as st

from context.entry import _TIMESTAMP_RE, UserContent, _real_moment, make_entry, role_of
from context.log import ContextLog, Tail
from context.toolcalls import FinishRequest, PostMessage
from context.validate import (
    Report,
    Scan,
    _parse_array,
    _scan_items,
    entries_at,
    log_text,
    scan_log,
    validate_log,
)
from tests.context.test_fuzz import STAMP, near_entries


def whole(data: bytes | str) -> Report:
    """The validation as it was: the whole document parsed, then its items checked."""
    report = Report()
    text = log_text(data)
    if not isinstance(text, str):
        return Report(problems=[text])
    if not text.strip():
        return validate_log(text)
    items = _parse_array(text, report.problems)
    if items is None:
        return report
    scan = Scan()
    _scan_items(iter(items), scan, report.entries)
    report.problems = scan.problems
    if report.problems:
        report.entries = []
    return report


def same(data: bytes | str) -> None:
    streamed, read_whole = validate_log(data), whole(data)
    assert [str(p) for p in streamed.problems] == [str(p) for p in read_whole.problems]
    assert [e.canonical_json() for e in streamed.entries] == [
        e.canonical_json() for e in read_whole.entries
    ]


def a_log(size: int) -> str:
    """A valid log of about `size` characters, as `assistant export` writes one."""
    parts, tail, index = [], Tail(), 0
    contents = [
        UserContent(userid="<@U0ASKER01>", text="Where does the release stand? " * 6),
        PostMessage(text="It stands here: the migration is reviewed. " * 6, reasoning="Sum"),
        FinishRequest(reasoning="Answered"),
    ]
    total = 0
    while total < size:
        content = "You are Aya." if index == 0 else contents[(index - 1) % 3]
        at, turn, tail = tail.place(role_of(content))
        parts.append(make_entry(at, turn, STAMP, content).canonical_json())
        total += len(parts[-1]) + 2
        index += 1
    return "[\n" + ",\n".join(parts) + "\n]\n"


# Documents as a person's editor leaves them: the entries, then spaces, commas and brackets
# added, dropped or doubled anywhere between them, and documents cut short.
spacing = st.sampled_from(["", " ", "\n", "\t", "\r\n", " \n  ", "\u3000", "\x0c"])


@st.composite
def edited_documents(draw: st.DrawFn) -> str:
    items = [json.dumps(item) for item in draw(st.lists(near_entries, max_size=5))]
    joints = [draw(st.sampled_from([",", ",,", "", ", ", "]", "[", ",]"])) for _ in items]
    text = draw(spacing) + draw(st.sampled_from(["[", "", "[[", "{"]))
    for item, joint in zip(items, joints, strict=True):
        text += draw(spacing) + item + draw(spacing) + joint
    text += draw(st.sampled_from(["]", "", "]]", "] x", "]\n", "}"])) + draw(spacing)
    cut = draw(st.integers(0, len(text)))
    return text if draw(st.booleans()) else text[:cut]


@settings(max_examples=400)
@given(edited_documents())
def test_a_document_read_an_entry_at_a_time_has_the_problems_of_one_read_whole(text):
    same(text)


@settings(max_examples=200)
@given(st.lists(near_entries, max_size=5), st.integers(0, 70), st.integers(0, 4))
def test_nesting_too_deep_anywhere_is_the_one_problem(items, depth, where):
    deep: object = "x"
    for _ in range(depth):
        deep = [deep]
    items.insert(min(where, len(items)), {"content": deep})
    text = json.dumps(items)
    same(text)
    same(text + " x")  # a syntax error after it: the syntax error, as before
    same("[" * 5000)  # past the parser's own recursion limit


def test_every_example_log_is_read_alike(tmp_path):
    from tests.cli import DATA, ROOT

    for path in [*DATA.rglob("*.json"), *(ROOT / "examples").glob("*.json")]:
        same(path.read_bytes())


def test_a_long_log_is_checked_holding_a_few_entries_at_a_time():
    text = a_log(4_000_000)
    tracemalloc.start()
    try:
        scan = scan_log(text)
        _, checking = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        shown = sum(1 for _ in entries_at(text, scan.starts or []))
        _, reading = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert scan.problems == [] and scan.count == shown > 10_000
    # The entries' starts (a list of ints) and one entry's objects: a small share of the
    # text, where the document read whole held several times the text in objects.
    assert checking < len(text) // 8, checking
    assert reading < len(text) // 8, reading
    assert len(validate_log(text).entries) == scan.count


def test_the_timestamp_check_takes_what_strptime_takes():
    fields = (
        ["0000", "0001", "2024", "9999", "\u0662\u0660\u0662\u0665"],
        ["00", "01", "02", "12", "13", "\u0660\u0662"],
        ["00", "01", "28", "29", "30", "31", "32", "3\u0661"],
        ["00", "23", "24"],
        ["00", "59", "60"],
        ["00", "59", "60", "61"],
        ["", "\n"],
    )
    checked = 0
    for year, month, day, hour, minute, second, end in product(*fields):
        value = f"{year}-{month}-{day}T{hour}:{minute}:{second}Z{end}"
        if not _TIMESTAMP_RE.match(value):
            continue
        try:
            datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
            real = True
        except ValueError:
            real = False
        assert _real_moment(value) is real, value
        checked += 1
    assert checked > 1000


def test_a_log_read_again_from_its_starts_is_the_log():
    log = ContextLog()
    log.append("persona", STAMP)
    log.append(UserContent(userid="<@U0ANA>", text="oi"), STAMP)
    text = " \n" + log.prompt_text() + "\n"
    scan = scan_log(text)
    assert [e.canonical_json() for e in entries_at(text, scan.starts or [])] == [
        e.canonical_json() for e in log.entries
    ]
