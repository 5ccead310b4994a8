"""ASSISTANT_PROMPT_FILE changing under a running app (docs/configuration.md, "Configuration"): read
only when a new thread needs its persona, so a thread that has one never depends on it; a file
moved, deleted, emptied or no longer UTF-8 costs no message anything: new threads get its last good
text, the log says so in one line per problem, and in one more when it reads well again."""

from __future__ import annotations

import logging

import pytest

from tests.harness import answered_log, mention, script_answers

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = [pytest.mark.app_backend, pytest.mark.listeners]

LOGGER = "assistant.settings.persona_file"


def lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def test_a_prompt_file_gone_bad_keeps_its_last_text_for_new_threads(
    make_app, slack, model, tmp_path, caplog
):
    caplog.set_level(logging.INFO, logger=LOGGER)
    persona = tmp_path / "persona.txt"
    persona.write_text("You are Aya, from the file.\n", encoding="utf-8")
    app = make_app(assistant_prompt_file=persona)
    script_answers(model, 7)
    old = mention(slack, "hello")
    assert answered_log(app, slack, old)[0]["content"] == "You are Aya, from the file."

    persona.unlink()
    # A thread that has its persona does not read the file at all: not even a log line.
    log = answered_log(app, slack, mention(slack, "and again", thread_ts=old["ts"]))
    assert log[0]["content"] == "You are Aya, from the file."
    assert [e["content"].get("toolCall") for e in log[4:]] == [None, "postMessage", "finishRequest"]
    assert lines(caplog) == []

    # A new thread gets the last good text; the log says why, once per problem.
    for _ in range(2):
        log = answered_log(app, slack, mention(slack, "deleted"))
        assert log[0]["content"] == "You are Aya, from the file."
    assert lines(caplog) == [
        f"ASSISTANT_PROMPT_FILE: no such file {persona}; new threads get its last good text"
    ]

    persona.write_bytes(b"You are \xff\xfe broken.")
    log = answered_log(app, slack, mention(slack, "not utf-8"))
    assert log[0]["content"] == "You are Aya, from the file."
    persona.write_text("  \n", encoding="utf-8")
    log = answered_log(app, slack, mention(slack, "emptied"))
    assert log[0]["content"] == "You are Aya, from the file."
    assert lines(caplog)[1:] == [
        f"ASSISTANT_PROMPT_FILE: {persona} is not UTF-8 text (byte 8); new threads get its "
        "last good text",
        f"ASSISTANT_PROMPT_FILE: {persona} is empty; new threads get its last good text",
    ]

    # Moved back with new text: new threads get it, the log says it reads again.
    persona.write_text("You are Aya, edited.", encoding="utf-8")
    log = answered_log(app, slack, mention(slack, "fixed"))
    assert log[0]["content"] == "You are Aya, edited."
    assert lines(caplog)[-1] == f"ASSISTANT_PROMPT_FILE: {persona} reads again"
    assert len(lines(caplog)) == 4
