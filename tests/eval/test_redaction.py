"""Redaction of logs shared outside the workspace: a fixture with known secrets, none left in
what `export --redact-key` and `eval --save --redact-key` write, all put back with the key."""

from __future__ import annotations

import json

import pytest

from context.canonical import export_json
from context.entry import UserContent
from context.log import ContextLog
from context.redaction import Redactor, restore
from context.storage import ThreadKey, open_store
from context.toolcalls import FinishRequest, PostMessage
from context.validate import validate_log
from tests.process import clean_env, run_assistant

THREAD = ThreadKey("T0EVAL", "C0EVAL", "1800000000.000200")
# Not real keys: shaped as their vendors issue them.
SECRETS = {
    "slack bot token": "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "slack app token": "xapp-1-A0123456789-1234567890123-abcdef0123456789",
    "openai key": "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "github token": "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "aws key id": "AKIAIOSFODNN7EXAMPLE",
    "e-mail": "ana.souza@example.com.br",
    "phone": "+55 11 98765-4321",
    "phone in groups": "555-123-4567",
    "user id": "U01ABCDEF23",
}
QUESTION = (
    f"<@{SECRETS['user id']}> my key {SECRETS['openai key']} and token {SECRETS['slack bot token']}"
    f" leaked; app token {SECRETS['slack app token']}, github {SECRETS['github token']}, aws "
    f"{SECRETS['aws key id']}. Mail {SECRETS['e-mail']} or call {SECRETS['phone']} / "
    f"{SECRETS['phone in groups']}. Release 2025-04-04, ts 1800000000.000200."
)
ANSWER = f"Rotate them now, <@{SECRETS['user id']}>; I will mail {SECRETS['e-mail']}."


def contents() -> list[object]:
    return [
        "You are Aya.",
        UserContent(userid=f"<@{SECRETS['user id']}>", text=QUESTION),
        PostMessage(text=ANSWER, reasoning=f"Told {SECRETS['e-mail']}"),
        FinishRequest(reasoning="Done"),
    ]


def test_every_known_secret_is_replaced_and_the_key_puts_it_back():
    log = ContextLog()
    for number, content in enumerate(contents()):
        log.append(content, f"2025-04-04T12:3{number}:00Z")  # type: ignore[arg-type]
    original = export_json(log.entries)
    redactor = Redactor()
    redacted = export_json([redactor.entry(entry) for entry in log.entries])
    for what, secret in SECRETS.items():
        assert secret not in redacted, what
    assert validate_log(redacted).problems == []  # still a log: timestamps, ids kept
    assert "2025-04-04" in redacted and "1800000000.000200" in redacted
    # Stable: the same person is the same placeholder everywhere, still a mention.
    person = next(p for p, o in redactor.key.items() if o == SECRETS["user id"])
    assert redacted.count(f"<@{person}>") == 3
    assert restore(redacted, redactor.key) == original


@pytest.fixture
def stored(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = open_store(url)
    try:
        for number, content in enumerate(contents()):
            store.append(THREAD, content, f"2025-04-04T12:3{number}:00Z")  # type: ignore[arg-type]
    finally:
        store.close()
    return clean_env(DATABASE_URL=url)


def test_export_redacts_with_the_key_kept_apart(stored, tmp_path):
    plain = run_assistant("export", str(THREAD), "--with-metadata", env=stored, cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    args = ("export", str(THREAD), "--with-metadata", "--redact-key", "key.json")
    result = run_assistant(*args, "--out", "out.json", env=stored, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = (tmp_path / "out.json").read_text(encoding="utf-8")
    for what, secret in SECRETS.items():
        assert secret not in out, what
    key = json.loads((tmp_path / "key.json").read_text(encoding="utf-8"))["placeholders"]
    assert restore(out, key) == plain.stdout
    # Never the key over itself or in the output's place.
    for key_file in ("key.json", "out.json"):
        again = run_assistant(*args[:-1], key_file, "--out", "out.json", env=stored, cwd=tmp_path)
        assert again.returncode == 2


def test_a_saved_set_is_redacted_and_still_runs(stored, tmp_path):
    args = ("eval", str(THREAD), "--save", "set", "--redact-key")
    inside = run_assistant(*args, "set/key.json", env=stored, cwd=tmp_path)
    assert inside.returncode == 2
    assert "kept apart" in inside.stderr
    assert not (tmp_path / "set").exists()
    result = run_assistant(*args, "key.json", env=stored, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "set").rglob("*.json"))
    for what, secret in SECRETS.items():
        assert secret not in written, what
    assert json.loads((tmp_path / "set" / "manifest.json").read_text())["redacted"] is True
    again = run_assistant("eval", "set", "--demo-model", "--json", env=clean_env(), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert [c["case"] for c in json.loads(again.stdout)["cases"]] == [f"{THREAD}@2"]
