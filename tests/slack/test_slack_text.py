"""Text across the Slack boundary (assistant/slack/text.py): what is recorded from a message
(docs/log-format.md#peoples-messages) and what is posted from the model
(docs/log-format.md#tool-calls-and-their-results)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.slack.text import (
    MAX_MESSAGE_CHARS,
    clean_user_text,
    is_invisible,
    markdown_blocks,
    neutralize_mentions,
    split_message,
)

BOT = "U0FAKEBOT1"
WJ = "\u2060"  # word joiner

# -- clean_user_text ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"<@{BOT}> lunch?", "lunch?"),
        (f"<@{BOT}>: lunch?", "lunch?"),
        (f"<@{BOT}|aya>, lunch?", "lunch?"),
        (f"  <@{BOT}>\nlunch?", "lunch?"),
        (f"<@{BOT}>", ""),
    ],
)
def test_the_leading_bot_mention_is_removed(text, expected):
    assert clean_user_text(text, BOT) == expected


@pytest.mark.parametrize(
    "text",
    [
        f"ask <@{BOT}> about it",  # not leading: part of the sentence
        "<@U0OTHER01> what do you think?",  # someone else
        "see <#C0FAKECHN1|general> and <https://example.com|the docs>",
        "<!subteam^S0123|@team> please",
    ],
)
def test_other_mentions_and_links_stay_as_slack_wrote_them(text):
    assert clean_user_text(text, BOT) == text


def test_only_the_first_of_two_bot_mentions_goes():
    assert clean_user_text(f"<@{BOT}> tell <@{BOT}> hi", BOT) == f"tell <@{BOT}> hi"


def test_without_a_bot_id_nothing_is_removed():
    assert clean_user_text(f"<@{BOT}> hi", None) == f"<@{BOT}> hi"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a &amp; b", "a & b"),
        ("1 &lt; 2 &gt; 0", "1 < 2 > 0"),
        ("&amp;lt;", "&lt;"),  # once: what the person typed was "&lt;"
        ("&amp;amp;", "&amp;"),
        ("&amp;gt;&amp;", "&gt;&"),
        ("&quot; &#39; &nbsp;", "&quot; &#39; &nbsp;"),  # Slack escapes only three
    ],
)
def test_slacks_three_escapes_are_undone_exactly_once(text, expected):
    assert clean_user_text(text, BOT) == expected


def test_control_characters_go_but_newline_and_tab_stay():
    text = "a\x00b\x07c\x1bd\re\x7ff\x85g\x9fh\ni\tj"
    assert clean_user_text(text, BOT) == "abcdefgh\ni\tj"


def test_everything_else_is_kept():
    text = "Olá! 🍲 *bold* _it_ `code` \u200b \u2028 ﬁ"
    assert clean_user_text(text, BOT) == text


@settings(max_examples=300)
@given(st.text())
def test_cleaned_text_has_no_control_character_but_newline_and_tab(text):
    cleaned = clean_user_text(text, BOT)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", cleaned)
    assert cleaned.count("\n") + cleaned.count("\t") <= text.count("\n") + text.count("\t")


@settings(max_examples=300)
@given(
    st.text(alphabet=st.characters(blacklist_categories=["Cc", "Cs"]).filter(lambda c: c != "&"))
)
def test_text_without_escapes_or_controls_is_unchanged(text):
    assert clean_user_text(text, None) == text


# -- neutralize_mentions ----------------------------------------------------------------------

# Anything Slack could turn into a broadcast: its tokens (user groups too), or the plain words.
PING = re.compile(
    r"<!(channel|here|everyone|group|subteam)\b|(?<![^\W_])@(channel|here|everyone|group)\b",
    re.I,
)
PERSON = re.compile(r"<@([UW][A-Z0-9]+)", re.I)


def people(text: str) -> set[str]:
    """The distinct people a text can notify (an unclosed `<@` counted too, to be safe)."""
    return {who.upper() for who in PERSON.findall(text)}


@pytest.mark.parametrize(
    "text",
    [
        "<!channel>",
        "<!here>",
        "<!here|here>",
        "<!here|@here>",
        "<!everyone>",
        "<!group>",
        "<!channel|channel> lunch is here",
        "@here",
        "@channel: meeting",
        "(@everyone)",
        "*@here*",
        "> @here quoted",
        "`@here`",
        "@HERE",
        "@@here",
        "hi @here and @channel and @everyone",
        "<!channel> and <!here> and <!everyone>",
        "<!here^x|now>",
        "<!here <b>",  # not closed as a token: still not a ping
        "<!<!here>>",
        "<!subteam^S0123|@team> please",
        "<!subteam^S0123>",
        "<!subteam^S0123|here>",
        "<!SUBTEAM^S0123|@team>",
        "<@U0FAKEUSR1|@here>",
        "<!date^1392734382^{date}|@here>",
    ],
)
def test_broadcasts_and_user_groups_cannot_ping(text):
    out = neutralize_mentions(text, max_people=5)
    assert not PING.search(out), out
    assert re.search(r"(channel|here|everyone|group|team|S0123)", out, re.I)  # still said


def test_broadcast_and_user_group_tokens_become_visible_words():
    assert neutralize_mentions("<!here|here> lunch") == f"@{WJ}here lunch"
    assert neutralize_mentions("<!CHANNEL>") == f"@{WJ}channel"
    assert neutralize_mentions("ask <!subteam^S0123|@devs>!") == f"ask @{WJ}devs!"
    assert neutralize_mentions("ask <!subteam^S0123>") == f"ask @{WJ}S0123"


def test_people_beyond_the_cap_become_plain_names():
    text = " ".join(f"<@U{i:08d}>" for i in range(20)) + " <@W0000000X|@zoe> <@U00000000>"
    out = neutralize_mentions(text, max_people=5)
    kept = [f"<@U{i:08d}>" for i in range(5)]
    assert out.split(" ")[:5] == kept
    assert out.split(" ")[5:] == [f"@{WJ}U{i:08d}" for i in range(5, 20)] + [
        f"@{WJ}zoe",
        "<@U00000000>",  # the first person again: no one new is notified
    ]
    assert people(out) == {f"U{i:08d}" for i in range(5)}


def test_no_one_at_all_with_a_cap_of_zero():
    out = neutralize_mentions("<@U0FAKEUSR1> and <@U0FAKEBOT1|aya>", max_people=0)
    assert out == f"@{WJ}U0FAKEUSR1 and @{WJ}aya"


def test_an_unclosed_token_cannot_become_one():
    assert neutralize_mentions("<@U0FAKEUSR1 oops") == f"<{WJ}@U0FAKEUSR1 oops"
    assert neutralize_mentions("a <!here b") == f"a <{WJ}!here b"


@pytest.mark.parametrize(
    "text",
    [
        "mail a@here.com or b@channel.org",
        "<@U0FAKEUSR1> and <@U0FAKEBOT1|aya>",
        "where is here? the channel #general; everyone!",
        "<#C0FAKECHN1|here>",
        "<!date^1392734382^{date}|Feb 18>",
        "```html\n<!DOCTYPE html>\n<!-- a comment -->\n```",
        "List<@NonNull String> names;",
        "a < b > c <> <!> <@>",
        "",
    ],
)
def test_everything_else_is_untouched(text):
    assert neutralize_mentions(text, max_people=5) == text


def test_broadcasts_in_underscore_italics_cannot_ping():
    assert not PING.search(neutralize_mentions("_@here_").replace("_", " "))


_PIECES = [
    "@here", "@channel", "@everyone", "@group", "<!here>", "<!channel|c>", "<!everyone>",
    "<!subteam^S1>", "<!subteam^S2|@devs>", "<!date^1^{date}|d>", "<@U1>", "<@U2|bob>",
    "<@W3>", "<@u4>", "<@U5|@here>", "<@U6", "<!", "<@", "<", ">", "|", "^", "!", "@",
    "here", "subteam", "U7", " ", "\n", "a@", "x", "*", "_", "(", ":",
]  # fmt: skip


@settings(max_examples=500)
@given(
    st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=5)), max_size=16).map("".join),
    st.integers(min_value=0, max_value=3),
)
def test_the_output_never_pings_a_crowd_and_a_second_pass_changes_nothing(text, cap):
    out = neutralize_mentions(text, cap)
    assert not PING.search(out), out
    assert len(people(out)) <= cap, out
    assert neutralize_mentions(out, cap) == out
    if "<" not in text:  # only word joiners were added
        assert out.replace(WJ, "") == text.replace(WJ, "")


# -- is_invisible ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        " ",
        "\n\t \r\n",
        "\u200b",  # zero-width space
        "\u200c\u200d",  # zero-width non-joiner, joiner
        "\u2060",  # word joiner
        "\ufeff",  # byte order mark
        "\u00ad\u200e\u200f\u061c",  # soft hyphen, direction marks
        "\u3000\u00a0\u2028\u2029",  # ideographic and no-break spaces, separators
        "\u2800\u3164\u115f\ufe0f\U000e0020",  # blank braille, Hangul filler, selectors, tags
        " \u200b \u2060\n\ufeff ",
    ],
)
def test_texts_that_show_nothing_are_invisible(text):
    assert is_invisible(text)


@pytest.mark.parametrize("text", ["a", " . ", "\u200b🙂", "…", "\u0301", "ㅤx", "`​`"])
def test_texts_with_anything_to_see_are_not(text):
    assert not is_invisible(text)


@settings(max_examples=300)
@given(st.text())
def test_a_text_is_invisible_only_when_every_character_is(text):
    assert is_invisible(text) == all(is_invisible(c) for c in text)
    assert is_invisible(text + "x") is False


# -- split_message -----------------------------------------------------------------------------


def pieces_in_order(text: str, chunks: list[str]) -> bool:
    """The chunks are consecutive pieces of `text`, only newlines dropped between them."""
    pos = 0
    for chunk in chunks:
        while pos < len(text) and text[pos] == "\n" and not text.startswith(chunk, pos):
            pos += 1
        if not text.startswith(chunk, pos):
            return False
        pos += len(chunk)
    return set(text[pos:]) <= {"\n"}


def fences_balanced(chunk: str) -> bool:
    return chunk.count("```") % 2 == 0


def test_a_short_message_is_one_chunk():
    assert split_message("hello") == ["hello"]
    assert split_message("") == [""]
    assert split_message("x" * MAX_MESSAGE_CHARS) == ["x" * MAX_MESSAGE_CHARS]


def test_the_default_limit_leaves_room_under_slacks():
    assert MAX_MESSAGE_CHARS <= 12_000
    assert markdown_blocks("**hi**") == [{"type": "markdown", "text": "**hi**"}]


def test_a_long_message_is_cut_at_paragraphs_in_order():
    paragraphs = [f"Paragraph {i}. " + "word " * 300 for i in range(20)]
    text = "\n\n".join(p.strip() for p in paragraphs)
    chunks = split_message(text, 4000)
    assert len(chunks) > 1
    assert all(len(c) <= 4000 for c in chunks)
    assert pieces_in_order(text, chunks)
    # cut between paragraphs: every chunk starts one
    assert all(c.startswith("Paragraph ") for c in chunks)
    assert [int(re.match(r"Paragraph (\d+)", c)[1]) for c in chunks] == sorted(
        int(re.match(r"Paragraph (\d+)", c)[1]) for c in chunks
    )


def test_without_paragraphs_it_cuts_at_lines_then_at_spaces_then_hard():
    lines = "\n".join(f"line {i:04d} " + "x" * 40 for i in range(500))
    chunks = split_message(lines, 1000)
    assert all(len(c) <= 1000 for c in chunks)
    assert all(c.startswith("line ") and c.endswith("x") for c in chunks)
    assert pieces_in_order(lines, chunks)

    words = " ".join(f"w{i}" for i in range(3000))
    chunks = split_message(words, 500)
    assert all(len(c) <= 500 for c in chunks)
    assert all(re.fullmatch(r"w\d+( w\d+)* ?", c) for c in chunks)
    assert "".join(chunks) == words

    blob = "abcdefghij" * 300
    chunks = split_message(blob, 1000)
    assert all(len(c) <= 1000 for c in chunks)
    assert "".join(chunks) == blob


def test_a_code_block_cut_in_two_is_closed_and_reopened():
    code = "\n".join(f"print({i})  # step {i}" for i in range(400))
    text = f"Here is the script:\n\n```\n{code}\n```\n\nRun it."
    chunks = split_message(text, 2000)
    assert len(chunks) > 2
    assert all(len(c) <= 2000 for c in chunks)
    assert all(fences_balanced(c) for c in chunks)
    assert all(c.startswith("```") for c in chunks[1:])  # each continues as code
    assert chunks[-1].endswith("Run it.")
    body = [line for c in chunks for line in c.split("\n") if line.startswith("print(")]
    assert body == code.split("\n")


def test_a_hard_cut_never_splits_a_fence_marker():
    text = "x" * 995 + "```" + "y" * 2000 + "```"
    chunks = split_message(text, 1000)
    assert all(fences_balanced(c) for c in chunks), chunks


def test_no_chunk_is_blank():
    text = "start" + " " * 3000 + "end"
    assert all(c.strip() for c in split_message(text, 1000))


# Realistic replies: words on lines (shorter than half the limit), blank lines, code fences.
_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyzé🙂*_<>@", min_size=1, max_size=10)
_line = st.lists(_word, max_size=8).map(" ".join)
_fence = st.sampled_from(["```", "```python", "    ```"])
_text = st.lists(st.one_of(_line, _line, _line, _fence, st.just("")), max_size=150).map("\n".join)


@settings(max_examples=300)
@given(_text, st.integers(min_value=200, max_value=800))
def test_split_message_properties(text, limit):
    chunks = split_message(text, limit)
    assert chunks
    assert all(len(c) <= limit for c in chunks)
    if len(text) <= limit:
        assert chunks == [text]
    if text.strip():
        assert all(c.strip() for c in chunks)
    # Nothing lost, nothing added but whitespace and fence markers, in order.
    drop = re.compile(r"[\s`]")
    assert drop.sub("", "".join(chunks)) == drop.sub("", text)
    if "`" not in text:
        assert pieces_in_order(text, chunks)
    if fences_balanced(text):
        assert all(fences_balanced(c) for c in chunks), chunks
