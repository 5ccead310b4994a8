"""The context budget: what `build_prompt` keeps, leaves out and shortens, and its properties."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from context.budget import (
    BudgetError,
    BuiltPrompt,
    PromptBuilder,
    build_prompt,
    carries_instructions,
)
from context.entry import Entry, UserContent
from context.log import ContextLog
from context.prompt_pieces import MARKER, PromptCache, full_text, omission_note, shortened_json
from context.tokens import EstimateCounter, TokenCounter, exact_counter
from context.toolcalls import FinishRequest, GetThreadHistory, PostMessage

STAMP = "2025-06-02T09:14:05Z"
ESTIMATE = EstimateCounter()
EXACT = exact_counter("o200k_base")
COUNTERS = [c for c in (ESTIMATE, EXACT) if c is not None]
INSTRUCTIONS = "Instructions: answer in French from now on."


def thread(runs: int, *, paste_at: int | None = None, pin_every: int = 0) -> ContextLog:
    """A thread of `runs` requests: a user, sometimes a history read and its result, a reply."""
    log = ContextLog()
    log.append("You're Aya, the on-call helper. Keep replies short.", STAMP)
    for run in range(runs):
        text = f"question {run}: " + "could you check the deploy logs again " * 3
        if run == paste_at:
            text = "here is the whole log:\n" + "ERROR billing-api failed to migrate\n" * 900
        log.append(UserContent(userid=f"<@U{run % 3}>", text=text), STAMP)
        if run % 3 == 0:
            log.append(GetThreadHistory(limit=20, reasoning="Earlier messages."), STAMP)
            log.append(
                "Thread history (2 messages, newest first):\n" + "[t] <@U1>: hi\n" * 8, STAMP
            )
        if pin_every and run % pin_every == pin_every - 1:
            log.append(INSTRUCTIONS, STAMP)
        log.append(PostMessage(text=f"answer {run}: " + "the migration step " * 8), STAMP)
        log.append(FinishRequest(reasoning="Answered."), STAMP)
    return log


def parts(built: BuiltPrompt) -> list[dict[str, Any]]:
    value = json.loads(built.text)
    assert isinstance(value, list)
    return value


def check(
    built: BuiltPrompt,
    entries: list[Entry],
    budget: int,
    counter: TokenCounter,
    pinned: set[int] | frozenset[int] = frozenset(),
    *,
    exact: bool = True,
) -> list[dict[str, Any]]:
    """The invariants every built prompt keeps (`exact`: its token count is the count, not a
    bound on it)."""
    count = counter.count(built.text)
    assert (built.tokens == count if exact else count <= built.tokens) and built.tokens <= budget
    items = parts(built)
    shown = [item["index"] for item in items if "index" in item]
    assert shown[0] == 0 and items[0] == entries[0].as_dict()
    assert shown == sorted(shown)
    assert pinned | {0} <= set(shown)
    assert len(entries) - 1 in shown  # the newest entry
    for item in items:  # pinned entries: whole
        if item.get("index") in pinned | {0}:
            assert item == entries[item["index"]].as_dict()
    # A tool call and the system entry right after it: both shown or both left out.
    for entry, after in pairwise(entries):
        if entry.role == "assistant" and after.role == "system":
            assert (entry.index in shown) == (after.index in shown)
    # The notes name exactly the omitted indexes, each in the place of its range.
    omitted = set(range(len(entries))) - set(shown)
    named: set[int] = set()
    for position, item in enumerate(items):
        if "omitted" in item:
            first, last = item["omitted"]["from"], item["omitted"]["to"]
            assert item == json.loads(omission_note(first, last))
            named |= set(range(first, last + 1))
            assert items[position - 1]["index"] == first - 1
            if position + 1 < len(items):
                assert items[position + 1]["index"] == last + 1
    assert named == omitted
    assert {i for first, last in built.omitted for i in range(first, last + 1)} == omitted
    # Shown entries are the log's entries, whole or with their text cut to a head and a marker.
    for item in items:
        if "index" in item:
            whole = entries[item["index"]].as_dict()
            assert (item != whole) == (item["index"] in built.shortened)
            if item != whole:
                assert_cut(item, whole)
    return items


def assert_cut(item: dict[str, Any], whole: dict[str, Any]) -> None:
    holder, key = ("content", "text") if isinstance(whole["content"], dict) else (None, "content")
    cut, full = (item[holder], whole[holder]) if holder else (item, whole)
    assert {k: v for k, v in cut.items() if k != key} == {k: v for k, v in full.items() if k != key}
    head = cut[key][: cut[key].index("\n[…")]
    assert full[key].startswith(head)
    assert cut[key] == head + MARKER.format(len(full[key]) - len(head), whole["index"])


# --- unit tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("counter", COUNTERS, ids=lambda c: c.name)
def test_a_log_that_fits_is_the_log_prompt_byte_for_byte(counter: TokenCounter) -> None:
    log = thread(6)
    built = build_prompt(log.entries, 100_000, counter)
    assert built.text == log.prompt_text()
    assert built.tokens == counter.count(log.prompt_text())
    assert built.omitted == () and built.shortened == ()


@pytest.mark.parametrize("counter", COUNTERS, ids=lambda c: c.name)
def test_the_oldest_entries_are_left_out_with_a_note_after_entry_0(counter: TokenCounter) -> None:
    log = thread(40)
    built = build_prompt(log.entries, 1500, counter)
    items = check(built, list(log.entries), 1500, counter)
    assert built.omitted and built.omitted[0][0] == 1
    first, last = built.omitted[0]
    assert items[1] == {
        "omitted": {"from": first, "to": last},
        "note": f"Entries {first}–{last} are left out to fit the context budget; "  # noqa: RUF001
        "getThreadHistory brings back the thread's messages and expandEntry(index) any single "
        "entry.",
    }
    assert items[2]["index"] == last + 1


def test_pinned_entries_stay_in_place_and_split_the_omitted_range() -> None:
    log = thread(40, pin_every=7)
    pinned = {e.index for e in log.entries if e.role == "system" and e.content == INSTRUCTIONS}

    def carries_instructions(entry: Entry) -> bool:
        return entry.role == "system" and entry.content == INSTRUCTIONS

    for spec in (pinned, carries_instructions):
        built = build_prompt(log.entries, 1500, ESTIMATE, pinned=spec)
        check(built, list(log.entries), 1500, ESTIMATE, pinned)
        assert len(built.omitted) > 1  # pinned entries inside the omitted part split it


def test_a_long_paste_is_shortened_once_and_the_log_is_unchanged() -> None:
    log = thread(3, paste_at=1)
    paste = next(e for e in log.entries if e.role == "user" and len(e.content.text) > 20_000)
    original = paste.canonical_json()
    cache = PromptCache()
    built = build_prompt(log.entries, 3000, ESTIMATE, cache=cache, head_chars=500)
    items = check(built, list(log.entries), 3000, ESTIMATE)
    shown = next(item for item in items if item.get("index") == paste.index)
    text = shown["content"]["text"]
    cut = len(paste.content.text) - text.index("\n[…")
    assert text.endswith(MARKER.format(cut, paste.index))
    assert f"expandEntry(index={paste.index})" in text and len(text) < 600
    assert paste.index in built.shortened and built.omitted == ()
    assert paste.canonical_json() is original  # the log itself is never changed
    again = build_prompt(log.entries, 3000, ESTIMATE, cache=cache, head_chars=500)
    assert again == built


def test_an_exempt_entry_is_shown_whole() -> None:
    log = thread(3, paste_at=2)
    paste = max(log.entries, key=lambda e: len(e.canonical_json()))
    built = build_prompt(log.entries, 30_000, ESTIMATE, exempt={paste.index}, head_chars=500)
    check(built, list(log.entries), 30_000, ESTIMATE)
    assert paste.canonical_json() in built.text and paste.index not in built.shortened


def test_pinned_entries_are_shortened_only_as_a_last_resort() -> None:
    log = ContextLog()
    log.append("Rules: " + "be brief and kind. " * 600, STAMP)
    log.append(UserContent(userid="<@U1>", text="hi"), STAMP)
    built = build_prompt(log.entries, 1200, ESTIMATE)
    assert built.shortened == (0,) and built.tokens <= 1200
    rules = json.loads(built.text)[0]["content"]
    head = rules[: rules.index("\n[…")]
    assert rules == head + MARKER.format(len(log.entries[0].content) - len(head), 0)


def test_an_impossible_budget_is_a_clear_error() -> None:
    log = thread(2)
    with pytest.raises(BudgetError, match="cannot fit 20 tokens"):
        build_prompt(log.entries, 20, ESTIMATE)
    with pytest.raises(ValueError, match="whole log"):
        build_prompt(log.entries[1:], 1000, ESTIMATE)


@pytest.mark.parametrize("counter", COUNTERS, ids=lambda c: c.name)
def test_the_cut_moves_rarely_forward_and_in_chunks(counter: TokenCounter) -> None:
    """As the log grows, each prompt starts with the previous one (minus `]`), except at the
    few steps where the cut moves forward."""
    log, cache = thread(80), PromptCache()
    previous: BuiltPrompt | None = None
    moves = steps = 0
    for size in range(2, len(log) + 1):
        built = build_prompt(log.entries[:size], 2000, counter, cache=cache)
        steps += 1
        if previous is not None:
            if built.omitted == previous.omitted:
                assert built.text.startswith(previous.text[:-1])
            else:
                moves += 1
                assert built.omitted[-1][1] > (previous.omitted or ((0, 0),))[-1][1]
        previous = built
    assert 0 < moves <= steps // 10


# --- properties -------------------------------------------------------------------------------

short_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)
long_text = st.integers(1_000, 12_000).map(lambda n: ("Ünïcode paste 日本語 " * 700)[:n])
step = st.one_of(
    st.builds(lambda t: [UserContent(userid="<@U1>", text=t)], short_text | long_text),
    st.builds(lambda t: [PostMessage(text=t or "ok")], short_text | long_text),
    st.builds(lambda t: [GetThreadHistory(limit=20), "Thread history:\n" + t], short_text),
    st.builds(lambda r: [FinishRequest(reasoning=r)], st.none() | short_text),
    st.just([INSTRUCTIONS]),
    st.builds(lambda t: [t], short_text | long_text),
)
steps = st.lists(step, min_size=1, max_size=60)


def build_log(groups: list[list[Any]]) -> ContextLog:
    log = ContextLog()
    log.append("You're Aya.", STAMP)
    for group in groups:
        for content in group:
            log.append(content, STAMP)
    return log


def pinned_of(log: ContextLog) -> set[int]:
    return {e.index for e in log.entries if e.role == "system" and e.content == INSTRUCTIONS}


@settings(max_examples=200)
@given(
    st.lists(step, min_size=6, max_size=60),
    st.integers(0, 1_500),
    st.sampled_from(COUNTERS),
    st.booleans(),
)
def test_any_log_fits_any_workable_budget(groups, extra, counter, exempt_last) -> None:
    log = build_log(groups)
    entries, pinned = list(log.entries), pinned_of(log)
    # Above what a prompt needs at the least (entry 0, the pinned entries and the newest entry
    # whole, a note per gap between them), any budget must work.
    must = [entries[i].canonical_json() for i in sorted(pinned | {0, len(entries) - 1})]
    floor = counter.count("[" + ",".join(must) + "]") + 80 * (len(must) + 1)
    # ... and the entries that go with those: a tool call before a pinned or newest entry.
    for index in pinned | {len(entries) - 1, len(entries) - 2}:
        before = entries[index - 1] if index > 0 else None
        if before is not None and before.role == "assistant":
            floor += counter.count(shortened_json(before, 300) or before.canonical_json()) + 1
    budget = floor + extra
    exempt = {len(entries) - 1} if exempt_last else None
    built = build_prompt(entries, budget, counter, pinned=pinned, exempt=exempt, head_chars=300)
    check(built, entries, budget, counter, pinned)
    event(f"omitted ranges: {len(built.omitted)}; shortened: {bool(built.shortened)}")
    for index in pinned | (exempt or set()):
        assert entries[index].canonical_json() in built.text


@settings(max_examples=100)
@given(steps, st.sampled_from(COUNTERS))
def test_with_a_big_budget_the_prompt_is_the_log(groups, counter) -> None:
    log = build_log(groups)
    built = build_prompt(log.entries, 10**7, counter, pinned=pinned_of(log))
    assert built.text == ContextLog(log.entries).prompt_text()


@settings(max_examples=60)
@given(steps, st.integers(600, 3_000))
def test_the_cut_only_moves_forward(groups, budget) -> None:
    log, cache = build_log(groups), PromptCache()
    pinned, reach = pinned_of(log), 0
    for size in range(2, len(log) + 1):
        try:
            built = build_prompt(log.entries[:size], budget, ESTIMATE, pinned=pinned, cache=cache)
        except BudgetError:
            continue
        last = built.omitted[-1][1] if built.omitted else 0
        assert last >= reach
        reach = last


# --- step after step: PromptBuilder --------------------------------------------------------


@settings(max_examples=80)
@given(steps, st.integers(400, 4_000), st.sampled_from(COUNTERS))
def test_built_step_after_step_every_prompt_keeps_the_invariants(groups, budget, counter) -> None:
    """The incremental builder gives prompts as good as a fresh build: within the budget as
    the counter counts them, entry 0 and the pinned entries whole, no tool call apart from its
    result, the notes naming exactly what is left out; and each one extends the last unless
    the cut moved."""
    log = build_log(groups)
    builder = PromptBuilder(budget, counter, pinned=carries_instructions, head_chars=300)
    previous: BuiltPrompt | None = None
    for size in range(1, len(log) + 1):
        entries = list(log.entries[:size])
        try:
            built = builder.build(entries)
        except BudgetError:
            continue
        pinned = {e.index for e in entries if carries_instructions(e)}
        check(built, entries, budget, counter, pinned, exact=False)
        if (
            previous is not None
            and built.omitted == previous.omitted
            and (
                bool(previous.omitted or previous.shortened)
                == bool(built.omitted or built.shortened)
            )
        ):
            assert built.text.startswith(previous.text[:-1])
        previous = built


@settings(max_examples=300)
@given(st.lists(short_text | long_text, min_size=2, max_size=6), st.sampled_from(COUNTERS))
def test_joining_pieces_costs_no_more_than_counting_them_apart(texts, counter) -> None:
    """What PromptBuilder's bound rests on: a prompt's count is at most the sum of its
    entries' counts plus one per bracket and comma."""
    log = ContextLog()
    for n, text in enumerate(texts):
        log.append(UserContent(userid="<@U1>", text=text) if n % 2 else text or "-", STAMP)
    pieces = [entry.canonical_json() for entry in log.entries]
    assert counter.count(log.prompt_text()) <= 1 + sum(counter.count(p) + 1 for p in pieces)


def test_the_builder_keeps_the_cut_while_the_rest_fits() -> None:
    log = thread(120)
    builder = PromptBuilder(3_000, EXACT or ESTIMATE, pinned=carries_instructions)
    texts = [builder.build(log.entries[:size]).text for size in range(2, len(log) + 1)]
    extended = sum(b.startswith(a[:-1]) for a, b in pairwise(texts))
    assert extended >= 0.9 * (len(texts) - 1)


def test_full_text_is_what_the_marker_stands_for() -> None:
    log = thread(3, paste_at=1)
    paste = next(e for e in log.entries if e.role == "user" and len(e.content.text) > 5_000)
    assert full_text(paste) == paste.content.text
    reply = next(e for e in log.entries if isinstance(e.content, PostMessage))
    assert full_text(reply) == reply.content.text
    assert full_text(log.entries[0]) == log.entries[0].content
    finish = next(e for e in log.entries if isinstance(e.content, FinishRequest))
    assert json.loads(full_text(finish)) == finish.as_dict()["content"]
