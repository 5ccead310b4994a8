"""A routine's own words: the heading in a language, its prompt unable to ping a channel or a
user group, and the pause note. Pure: the catalogs, no Slack."""

from __future__ import annotations

from assistant.i18n.words import Words
from assistant.routines.runs import heading, pause_note
from context.storage import Routine

JOINER = "\u2060"


def routine(prompt: str, creator: str | None = "U0ADA") -> Routine:
    return Routine(7, "T1", "C1", prompt, creator, "0 9 * * *", "Europe/Paris", None, None)


def test_the_heading_names_the_routine_and_its_creator():
    assert heading(routine("Summarize the day.")) == "⏰ Routine 7 of <@U0ADA>: Summarize the day."
    assert heading(routine("Go.", None)) == "⏰ Routine 7: Go."


def test_broadcasts_and_user_groups_in_the_prompt_ping_nobody():
    text = heading(routine("<!channel> <!here> <!everyone> <!subteam^S1|@ops> ask <@U0BOB>"))
    for token in ("<!channel>", "<!here>", "<!everyone>", "<!subteam"):
        assert token not in text
    assert f"@{JOINER}channel" in text and f"@{JOINER}ops" in text
    # the creator, and people named in the prompt, are still mentioned as written
    assert "<@U0ADA>" in text and "<@U0BOB>" in text


def test_the_heading_and_the_note_in_other_languages():
    assert heading(routine("Hola."), Words("es")) == "⏰ Rutina 7 de <@U0ADA>: Hola."
    assert heading(routine("やあ"), Words("ja")).startswith("⏰ <@U0ADA> のルーティン 7")
    note = pause_note(routine("x"), "the bot is off in C1", Words("pt_BR"))
    assert note.startswith("Sua rotina 7 em <#C1> está pausada: the bot is off in C1.")
