"""The incremental decoder of a postMessage's `text` (assistant/model/json_stream.py): whatever the
points the model's server splits the arguments at, what it shows is what json.loads reads."""

from __future__ import annotations

import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.model.json_stream import MemberDecoder, StringDecoder


def pieces(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(c, len(text)) for c in cuts})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def decode_member(text: str, cuts: list[int], name: str = "text") -> tuple[str, bool]:
    decoder = MemberDecoder(name)
    return "".join(decoder.feed(p) for p in pieces(text, cuts)), decoder.done


def decode_literal(literal: str, cuts: list[int]) -> str:
    """A JSON string literal (with its quotes) through StringDecoder, in pieces."""
    decoder = StringDecoder()
    out = []
    for piece in pieces(literal[1:], cuts):
        decoded, _ = decoder.feed(piece)
        out.append(decoded)
    assert decoder.closed and not decoder.failed
    return "".join(out)


# Any text a model writes, surrogates (lone ones too: json.loads makes them of a lone \\uD83D).
texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=60)
cut_points = st.lists(st.integers(min_value=0, max_value=400), max_size=12)

# String literals as a model may write them: any mix of plain characters and escapes,
# `\\uXXXX` of anything (halves of pairs in order, reversed or alone), in either case.
_escape = st.one_of(
    st.sampled_from(['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"]),
    st.integers(0, 0xFFFF).map(lambda u: f"\\u{u:04x}"),
    st.integers(0xD800, 0xDFFF).map(lambda u: f"\\u{u:04X}"),
    st.integers(0x10000, 0x10FFFF).map(lambda c: json.dumps(chr(c))[1:-1]),  # a pair
)
_plain = st.text(
    st.characters(blacklist_characters='"\\', blacklist_categories=("Cc", "Cs")), min_size=1
)
literals = st.lists(st.one_of(_escape, _plain), max_size=20).map(lambda p: '"' + "".join(p) + '"')


@given(texts, cut_points, st.booleans())
@settings(max_examples=400)
def test_any_text_split_anywhere_decodes_to_what_json_loads_reads(text, cuts, ascii_only):
    arguments = json.dumps({"text": text, "reasoning": "r"}, ensure_ascii=ascii_only)
    decoded, done = decode_member(arguments, cuts)
    assert decoded == json.loads(arguments)["text"]
    assert done


@given(literals, cut_points)
@settings(max_examples=400)
def test_any_string_literal_split_anywhere_decodes_as_json_loads(literal, cuts):
    assert decode_literal(literal, cuts) == json.loads(literal)


def test_a_surrogate_pair_split_between_its_halves_is_one_character():
    literal = '"a\\ud83d\\ude00b"'
    for cut in range(1, len(literal)):
        assert decode_literal(literal, [cut - 1]) == "a\U0001f600b"


def test_nothing_of_a_pair_shows_until_its_second_half_is_there():
    decoder = StringDecoder()
    assert decoder.feed("x\\ud83d") == ("x", "")
    assert decoder.feed("\\ude0") == ("", "")
    assert decoder.feed('0"') == ("\U0001f600", "")
    assert decoder.closed


def test_a_lone_high_surrogate_is_kept_as_json_loads_keeps_it():
    for literal in ['"\\ud83d"', '"\\ud83dx"', '"\\ud83d\\n"', '"\\ud83d\\u0041"', '"\\udead"']:
        assert decode_literal(literal, [3, 5, 7, 9]) == json.loads(literal)


def test_an_escape_cut_anywhere_waits_for_its_end():
    decoder = StringDecoder()
    out = [decoder.feed(c)[0] for c in '\\u00e9\\n\\"\\\\\\/"']
    assert "".join(out) == 'é\n"\\/'
    assert out[:6] == ["", "", "", "", "", "é"]  # nothing of \\u00e9 before its last digit


def test_text_after_other_members_nested_values_and_white_space_is_found():
    arguments = (
        '{ "reasoning" : "a \\"text\\": trap", "meta": {"text": "nested", "x": [1, {"text": 2}]},'
        '\n  "text"\t:\n "the one" }'
    )
    for cut in range(len(arguments)):
        assert decode_member(arguments, [cut]) == ("the one", True)


def test_a_member_name_written_with_escapes_is_still_that_name():
    assert decode_member('{"te\\u0078t": "found"}', [4, 9]) == ("found", True)


def test_a_value_that_is_not_a_string_shows_nothing():
    assert decode_member('{"text": 42, "reasoning": "x"}', [3]) == ("", False)
    assert decode_member('{"text": null}', []) == ("", False)


def test_an_invalid_escape_stops_the_preview_there():
    decoder = MemberDecoder("text")
    assert decoder.feed('{"text": "ok \\x then more"}') == "ok "
    assert decoder.done
    assert decoder.feed(" anything") == ""


def test_the_value_grows_piece_by_piece_as_it_arrives():
    decoder = MemberDecoder("text")
    assert decoder.feed('{"te') == ""
    assert decoder.feed('xt": "Hel') == "Hel"
    assert decoder.feed("lo, wor") == "lo, wor"
    assert not decoder.done
    assert decoder.feed('ld", "reasoning": "greet"}') == "ld"
    assert decoder.done
