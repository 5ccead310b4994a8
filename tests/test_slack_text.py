"""Text across the Slack boundary (assistant/slack_text.py): what is recorded from a message
(docs/log-format.md#peoples-messages) and what is posted from the model
(docs/log-format.md#tool-calls-and-their-results)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.slack_text import (
    MAX_MESSAGE_CHARS,
    clean_user_text,
    markdown_blocks,
    neutralize_broadcasts,
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


# -- neutralize_broadcasts ---------------------------------------------------------------------

# Anything Slack could turn into a broadcast: its tokens, or the plain words.
PING = re.compile(r"<!(channel|here|everyone)\b|(?<![\w@])@(channel|here|everyone)\b", re.I)


@pytest.mark.parametrize(
    "text",
    [
        "<!channel>",
        "<!here>",
        "<!here|here>",
        "<!here|@here>",
        "<!everyone>",
        "<!channel|channel> lunch is here",
        "@here",
        "@channel: meeting",
        "(@everyone)",
        "*@here*",
        "> @here quoted",
        "`@here`",
        "@HERE",
        "hi @here and @channel and @everyone",
        "<!channel> and <!here> and <!everyone>",
    ],
)
def test_broadcasts_cannot_ping(text):
    out = neutralize_broadcasts(text)
    assert not PING.search(out), out
    assert re.search(r"(channel|here|everyone)", out, re.I)  # still said, just not a ping


def test_broadcast_tokens_become_visible_words():
    assert neutralize_broadcasts("<!here|here> lunch") == f"@{WJ}here lunch"
    assert neutralize_broadcasts("<!CHANNEL>") == f"@{WJ}channel"


@pytest.mark.parametrize(
    "text",
    [
        "mail a@here.com or b@channel.org",
        "<@U0FAKEUSR1> and <@U0FAKEBOT1|aya>",
        "where is here? the channel #general; everyone!",
        "<#C0FAKECHN1|here>",
        "<!subteam^S0123|@team>",
        "<!date^1392734382^{date}|Feb 18>",
        "",
    ],
)
def test_everything_else_is_untouched(text):
    assert neutralize_broadcasts(text) == text


def test_broadcasts_in_underscore_italics_cannot_ping():
    assert not PING.search(neutralize_broadcasts("_@here_").replace("_", " "))


@settings(max_examples=300)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                ["@here", "@channel", "@everyone", "<!here>", "<!channel|c>", "<!everyone>"]
            ),
            st.sampled_from([" ", "\n", "a@", "x", "*", "(", ")", ":", "<@U1>", "@"]),
            st.text(max_size=5),
        ),
        max_size=12,
    ).map("".join)
)
def test_no_broadcast_survives_and_a_second_pass_changes_nothing(text):
    out = neutralize_broadcasts(text)
    assert not re.search(r"<!(channel|here|everyone)[|>]", out, re.I)
    assert neutralize_broadcasts(out) == out
    if "<!" not in text:  # only word joiners were added
        assert out.replace(WJ, "") == text.replace(WJ, "")


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


@settings(max_examples=300, deadline=None)
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
