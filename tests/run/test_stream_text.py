"""What of a text still being written is shown in Slack (assistant/run/streaming/text.py): never
anything the finished post would not start with, so a streamed answer ends exactly as a posted
one, broadcasts and mentions neutralized, long texts split at the same places."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.run.streaming.text import settled_end, shown_parts
from assistant.slack.text import neutralize_mentions, split_message

LIMIT = 40  # small, so that hypothesis's texts get split

# Texts made of what matters here: tokens, broadcast words, mentions, separators, fences.
fragments = st.sampled_from(
    [
        "<",
        ">",
        "!",
        "@",
        "|",
        "^",
        "<!",
        "<@",
        "<!here>",
        "<!channel|x>",
        "<!subteam^S1|@ops>",
        "<@U1>",
        "<@U2|bo>",
        "<@W3>",
        "<@U4>",
        "<@U5>",
        "@here",
        "@channel",
        "@everyone",
        "@group",
        "@her",
        "@chan",
        "@Here",
        "_@here_",
        "mail@here.com",
        "here",
        "chan",
        "nel",
        "everyone",
        "```",
        "`",
        " ",
        "  ",
        "\n",
        "\n\n",
        "word",
        "long words here",
        "é",
        "😀",
        "a",
        "b",
        "x",
        "\u200b",
        "<!date^1|d>",
        "<https://x.y|link>",
    ]
)
model_texts = st.lists(fragments, max_size=40).map("".join)


def check_prefixes(text: str, people: int | None) -> None:
    final = split_message(neutralize_mentions(text, people), LIMIT)
    for end in range(len(text) + 1):
        shown = shown_parts(text[:end], people, LIMIT)
        assert shown.parts[: shown.settled] == final[: shown.settled], (text, end)
        if shown.parts[-1].strip():
            assert len(final) >= len(shown.parts), (text, end)
            assert final[len(shown.parts) - 1].startswith(shown.parts[-1]), (text, end)


@given(model_texts, st.one_of(st.none(), st.integers(0, 3)))
@settings(max_examples=500)
def test_what_is_shown_is_always_the_start_of_what_will_be_posted(text, people):
    check_prefixes(text, people)


@given(st.text(st.sampled_from("ab <!@>here\n`"), max_size=120))
@settings(max_examples=500)
def test_the_same_for_any_text_of_the_risky_characters(text):
    check_prefixes(text, 2)


def test_a_broadcast_split_across_chunks_never_shows_whole():
    text = "Hello <!channel> and @everyone, bye"
    for end in range(len(text) + 1):
        shown = "".join(shown_parts(text[:end]).parts)
        assert "<!channel>" not in shown and "<!chan" not in shown
        assert "@everyone" not in shown  # only ever with the word joiner after the @
    assert shown_parts(text).parts == [neutralize_mentions(text)]


def test_an_unclosed_token_and_a_possible_broadcast_are_held_back():
    assert shown_parts("see <!chan").parts == ["see "]
    assert shown_parts("see <@U1").parts == ["see "]
    assert shown_parts("cost < 5 and").parts == ["cost < 5 and"]  # `< ` starts no token
    assert shown_parts("hi @her").parts == ["hi "]
    assert shown_parts("hi @here").parts == ["hi "]  # `@heresy` would not ping
    assert shown_parts("hi @heresy").parts == ["hi @heresy"]
    assert shown_parts("hi @here!").parts == ["hi @\u2060here!"]
    assert shown_parts("mail me@").parts == ["mail me"]


def test_settled_end_is_where_the_uncertainty_starts():
    assert settled_end("plain text") == len("plain text")
    assert settled_end("a <!here> b <@U1") == len("a <!here> b ")
    assert settled_end("a <") == 2
    assert settled_end("a <b") == 4
    assert settled_end("to @ever") == 3


def test_a_long_text_shows_its_first_message_whole_once_the_cut_is_known():
    first = "word " * 7  # 35 characters: the cut falls at its last space
    text = first + "second part goes on"
    shown = shown_parts(text, limit=LIMIT)
    assert shown.settled == 1
    assert shown.parts[0] == split_message(text, LIMIT)[0]
    assert split_message(text, LIMIT)[1].startswith(shown.parts[1])


def test_the_part_of_a_message_a_later_cut_may_move_is_held_back():
    # Past half the limit, a later paragraph break would take the cut there: the text after
    # the last sure cut point waits until the message is whole or the text ends.
    text = "a" * 25 + " bb cc"
    assert shown_parts(text, limit=LIMIT).parts == ["a" * 25 + " bb "]
