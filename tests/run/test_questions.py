"""What a server's question becomes (assistant/run/tools/questions.py): its form checked and
bounded, a URL shown only when it is https with a host, the values sent checked against it."""

from __future__ import annotations

import json

from assistant.i18n.words import ENGLISH
from assistant.run.tools.questions import (
    MAX_FIELDS,
    Question,
    answer_text,
    checked,
    form_view,
    message_blocks,
    question_of,
    submitted_values,
    url_refusal,
)


def plain(text: str) -> str:
    return text.replace("sk-secret", "[secret]")


def form(**properties) -> dict:
    return {
        "mode": "form",
        "message": "Pick\x07 one <!channel> sk-secret",
        "requestedSchema": {"type": "object", "properties": properties, "required": ["a"]},
    }


def test_a_form_is_bounded_redacted_and_its_kinds_kept():
    question = question_of(
        "shop",
        "order",
        form(
            a={"type": "string", "title": "T" * 500, "maxLength": 5},
            b={"type": "string", "oneOf": [{"const": "x", "title": "Ex"}, {"const": "y"}]},
            c={"type": "number", "minimum": 0.5, "maximum": "high"},
        ),
        plain,
    )
    assert isinstance(question, Question)
    assert question.message == "Pick one <!channel> [secret]"
    a, b, c = question.fields
    assert (a.kind, a.required, len(a.title), a.max_length) == ("string", True, 100, 5)
    assert (b.kind, b.options, b.labels) == ("enum", ("x", "y"), ("Ex", "y"))
    assert (c.kind, c.minimum, c.maximum) == ("number", 0.5, None)  # a bound not a number: none
    assert Question.from_json(question.to_json()) == question
    # The message shows the server's text as typed: no channel-wide ping made from it.
    text, _ = message_blocks(question, 7, "U1", ENGLISH)
    assert "&lt;!channel&gt;" in text and text.startswith("<@U1>, ")


def test_a_form_a_slack_form_cannot_show_is_not_shown():
    nested = form(a={"type": "object", "properties": {}})
    assert (
        question_of("s", "t", nested, plain)
        == "its field 'a' is not a string, number, boolean or choice"
    )
    many = form(**{f"f{n}": {"type": "string"} for n in range(MAX_FIELDS + 1)})
    assert "more than the 20 shown" in question_of("s", "t", many, plain)
    assert question_of("s", "t", {"mode": "form", "requestedSchema": "x"}, plain) == (
        "its form is not an object of fields"
    )


def test_only_an_https_url_with_a_host_and_no_password_is_shown():
    assert url_refusal("https://pay.example.com/x?y=1") is None
    assert url_refusal("http://pay.example.com/") == "its URL is not an https one"
    assert url_refusal("javascript:alert(1)") == "its URL is not an https one"
    assert (
        url_refusal("https://user:pw@pay.example.com/") == "its URL carries a user name or password"
    )
    assert url_refusal("https:///path") == "its URL is not an https one"
    assert url_refusal("https://a.example.com:port/") == "its URL is not one to show"
    assert url_refusal("https://a.example.com/\n") == "its URL is not one to show"
    assert url_refusal(["https://a.example.com"]) == "its URL is not one to show"
    asked = question_of(
        "s", "t", {"mode": "url", "message": "m", "url": "https://a.example.com/p"}, plain
    )
    assert isinstance(asked, Question) and asked.host == "a.example.com"
    secret = {"mode": "url", "message": "m", "url": "https://a.example.com/p?key=sk-secret"}
    assert question_of("s", "t", secret, plain) == "its URL carries a secret"


def test_the_values_sent_are_checked_against_the_form():
    question = question_of(
        "s",
        "t",
        form(
            a={"type": "integer", "minimum": 1, "maximum": 10},
            b={"type": "boolean"},
            c={"type": "string", "enum": ["S", "M"]},
            d={"type": "string", "minLength": 2},
            e={"type": "number"},
        ),
        plain,
    )
    assert isinstance(question, Question)
    good = {"a": " 3 ", "b": "false", "c": "M", "d": "hi", "e": "1e3"}
    assert checked(question, good, ENGLISH) == (
        {"a": 3, "b": False, "c": "M", "d": "hi", "e": 1000.0},
        {},
    )
    bad = {"a": None, "b": "maybe", "c": "XL", "d": "h", "e": "nan"}
    _, errors = checked(question, bad, ENGLISH)
    assert errors == {
        "a": "Required.",
        "b": "Not one of the choices.",
        "c": "Not one of the choices.",
        "d": "At least 2 characters.",
        "e": "Not a number.",
    }
    assert checked(question, {"a": "0"}, ENGLISH)[1] == {"a": "At least 1."}
    assert checked(question, {"a": "1.5"}, ENGLISH)[1] == {"a": "Not a whole number."}


def test_a_choice_too_long_for_slack_is_given_by_its_place_and_read_back():
    long = "L" * 200
    question = question_of("s", "t", form(a={"type": "string", "enum": ["S", long]}), plain)
    assert isinstance(question, Question)
    view = form_view(question, 3, ENGLISH)
    (block,) = [b for b in view["blocks"] if b["type"] == "input"]
    assert [o["value"] for o in block["element"]["options"]] == ["S", "#1"]
    state = {"f0": {"value": {"type": "static_select", "selected_option": {"value": "#1"}}}}
    assert submitted_values(question, state) == {"a": long}
    forged = {"f0": {"value": {"type": "static_select", "selected_option": {"value": "#9"}}}}
    assert checked(question, submitted_values(question, forged), ENGLISH)[1] == {
        "a": "Not one of the choices."
    }


def test_the_answers_entry():
    assert answer_text(5, "accept", "U1", {"b": 1, "a": "x"}) == (
        'Answer to the question of entry 5: accepted by <@U1>: {"a": "x", "b": 1}'
    )
    assert (
        answer_text(5, "decline", "U1", None)
        == "Answer to the question of entry 5: declined by <@U1>"
    )
    assert answer_text(5, "cancel", None, None, "<@U1> pressed stop") == (
        "Answer to the question of entry 5: cancelled: <@U1> pressed stop"
    )
    assert json.loads(json.dumps(answer_text(1, "cancel", None, None)))
