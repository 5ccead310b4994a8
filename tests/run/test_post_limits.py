"""How much one answer may post (assistant/run/core/post_limits.py), counted in process."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.i18n.words import Words
from assistant.run.core.post_limits import CUT_NOTE, PostCaps, PostLimits, cut_text


def post(limits: PostLimits, text: str) -> None:
    """Post `text` as the app does: refused, or charged."""
    assert limits.refusal(text, len(limits.chunks(text))) is None
    limits.charge(text, len(limits.chunks(text)))


def test_a_reply_posts_at_most_its_cap_and_the_next_reply_may_again() -> None:
    limits = PostLimits(PostCaps(posts_per_reply=2))
    post(limits, "one")
    post(limits, "two")
    refused = limits.refusal("three", 1)
    assert refused is not None and "ASSISTANT_MAX_POSTS_PER_REPLY" in refused
    assert limits.shortened("three") is None  # not a matter of length: nothing to cut
    limits.new_reply()
    post(limits, "three")


def test_an_answer_posts_at_most_its_characters() -> None:
    limits = PostLimits(PostCaps(chars_per_run=10))
    post(limits, "x" * 6)
    refused = limits.refusal("y" * 5, 1)
    assert refused is not None and "the 4 this answer may still post" in refused
    post(limits, "y" * 4)


def test_an_answer_posts_at_most_its_slack_messages() -> None:
    limits = PostLimits(PostCaps(messages_per_run=3))
    limits.charge("long", 2)
    refused = limits.refusal("more", 2)
    assert refused is not None and "1 left of its 3" in refused
    assert limits.refusal("more", 1) is None


@pytest.mark.parametrize("text", ["", "   \n", "\u200b\u2060"])
def test_an_invisible_text_is_refused_and_not_cut(text: str) -> None:
    limits = PostLimits()
    assert limits.refusal(text, 1) == "its text is only whitespace or invisible characters"
    assert limits.shortened(text) is None


def test_a_reply_makes_at_most_its_tool_calls_counted_as_asked() -> None:
    limits = PostLimits(PostCaps(calls_per_reply=2))
    assert [limits.call_refusal(), limits.call_refusal()] == [None, None]
    assert limits.calls_used_up
    refused = limits.call_refusal()
    assert refused is not None and "ASSISTANT_MAX_TOOL_CALLS_PER_REPLY" in refused
    limits.new_reply()
    assert not limits.calls_used_up and limits.call_refusal() is None


def test_a_long_text_is_cut_at_a_paragraph_with_the_note() -> None:
    limits = PostLimits(PostCaps(chars_per_run=200))
    text = " ".join(["first paragraph."] * 5) + "\n\n" + "second paragraph. " * 20
    cut = limits.shortened(text)
    assert cut is not None
    assert text[: cut.kept].endswith("first paragraph.") and text[cut.kept :].startswith("\n\n")
    assert cut.text == f"{text[: cut.kept]}\n\n{CUT_NOTE}"


def test_a_cut_inside_a_code_block_closes_it_before_the_note() -> None:
    assert (
        cut_text("see:\n```\nprint(1)\nprint(2)", 17) == f"see:\n```\nprint(1)\n```\n\n{CUT_NOTE}"
    )
    assert cut_text("   ", 3) == CUT_NOTE  # nothing kept: the note alone


def test_nothing_is_posted_after_a_cut() -> None:
    limits = PostLimits(PostCaps(chars_per_run=200))
    cut = limits.shortened("word " * 100)
    assert cut is not None
    limits.charge(cut.text, 1, cut=True)
    assert limits.refusal("a", 1) is not None
    assert limits.shortened("a") is None  # not even the note fits: the cut one said it


def test_what_earlier_runs_posted_counts_against_the_answer_not_the_reply() -> None:
    limits = PostLimits(PostCaps(posts_per_reply=1, chars_per_run=10))
    limits.count_earlier("x" * 8)
    assert limits.reply_posts == 0 and limits.messages == 1
    refused = limits.refusal("yyy", 1)
    assert refused is not None and "ASSISTANT_MAX_POST_CHARS_PER_RUN" in refused
    limits.count_earlier("z", cut=True)
    assert limits.chars == 10  # a cut earlier answer ended there


@settings(deadline=None, max_examples=60)
@given(
    text=st.text(alphabet=st.sampled_from("ab \n`<@U1>"), max_size=3000),
    chars=st.integers(min_value=0, max_value=5000),
    messages=st.integers(min_value=1, max_value=4),
    posted=st.integers(min_value=0, max_value=4000),
)
def test_a_shortened_text_is_always_one_that_may_be_posted(
    text: str, chars: int, messages: int, posted: int
) -> None:
    limits = PostLimits(PostCaps(chars_per_run=chars, messages_per_run=messages))
    limits.chars = min(posted, chars)
    cut = limits.shortened(text)
    if cut is None:
        return
    assert 0 <= cut.kept <= len(text) and cut.text.endswith(CUT_NOTE)
    assert limits.refusal(cut.text, len(limits.chunks(cut.text))) is None


def test_a_text_longer_than_the_messages_left_is_cut_to_fit_them() -> None:
    limits = PostLimits(PostCaps(messages_per_run=3, chars_per_run=100_000))
    limits.charge("earlier", 1)
    text = "\n\n".join(f"paragraph {n} " + "word " * 400 for n in range(15))  # ~3 messages
    assert len(limits.chunks(text)) > 2
    cut = limits.shortened(text)
    assert cut is not None and 0 < cut.kept < len(text)
    assert len(limits.chunks(cut.text)) <= 2
    assert limits.refusal(cut.text, len(limits.chunks(cut.text))) is None


def test_a_cut_s_note_is_in_the_language_of_those_answered_and_fits_the_caps():
    portuguese = Words("pt_BR")
    note = portuguese.gettext(CUT_NOTE)
    assert note.startswith("_(Tive que cortar minha resposta aqui") and note != CUT_NOTE
    assert cut_text("um dois três", 3, portuguese) == f"um\n\n{note}"
    limits = PostLimits(PostCaps(chars_per_run=200))
    cut = limits.shortened("palavra " * 100, portuguese)
    assert cut is not None and cut.text.endswith(note) and len(cut.text) <= 200


def test_a_text_the_answer_posted_already_is_refused_and_not_cut() -> None:
    limits = PostLimits()
    post(limits, "Noodles at noon.")
    assert limits.refusal(" Noodles at noon.\n", 1) == "this answer already posted the same text"
    assert limits.shortened("Noodles at noon.") is None
    # While a text streams it may still grow past an earlier post: not refused for that.
    assert limits.refusal("Noodles at noon.", 1, whole=False) is None
    limits.new_reply()  # an answer's, not a reply's
    assert limits.refusal("Noodles at noon.", 1) is not None
    post(limits, "Noodles at noon, in the park.")


def test_a_text_an_earlier_run_of_the_answer_posted_is_refused() -> None:
    limits = PostLimits()
    limits.count_earlier("Noodles at noon.")
    assert limits.refusal("Noodles at noon.", 1) == "this answer already posted the same text"


def test_the_calls_past_the_cap_are_one_note_said_once() -> None:
    limits = PostLimits(PostCaps(calls_per_reply=1))
    assert limits.skipped_note() is None
    limits.skip("expandEntry")
    assert limits.skipped_note() == (
        "Error: 1 more tool call of this reply (1 expandEntry) was not carried out or recorded: "
        "this reply already made 1 tool call, the most one reply may "
        "(ASSISTANT_MAX_TOOL_CALLS_PER_REPLY)."
    )
    assert limits.skipped_note() is None  # said once
    for tool in ["postMessage"] * 1_500 + ["expandEntry"]:
        limits.skip(tool)
    note = limits.skipped_note()
    assert note is not None and note.startswith(
        "Error: 1,501 more tool calls of this reply (1,500 postMessage, 1 expandEntry) were not"
    )
