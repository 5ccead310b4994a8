"""`assistant usage` prints names that come from outside (the model's name is what the
model's server answered with) as the trace prints entry text: a terminal escape, a bidi
override, a line break cannot restyle the terminal or forge a line of the report."""

from __future__ import annotations

import json

from context.canonical import load_log
from context.storage import EntryMeta, ThreadKey, open_store
from tests.cli import ROOT
from tests.process import clean_env, run_assistant

# Clears the screen, homes the cursor, turns the rest around, and writes a line of its own.
HOSTILE = "gpt\x1b[2J\x1b[H\u202e\x9b31m\ntotal  999  999\tforged"
SHOWN = "gpt\\u001b[2J\\u001b[H\\u202e\\u009b31m\\ntotal  999  999\\tforged"
THREAD = ThreadKey("T0AYA", "C0LUNCH", "1748854272.000100")


def stored(url: str) -> None:
    store = open_store(url)
    try:
        for entry in load_log((ROOT / "examples" / "aya-lunch.json").read_bytes()).entries:
            meta = EntryMeta()
            if entry.role == "assistant":
                meta = EntryMeta(model=HOSTILE, prompt_tokens=100, completion_tokens=5,
                                 latency_ms=20.0)  # fmt: skip
            store.append(THREAD, entry.content, entry.timestamp, meta)
    finally:
        store.close()


def test_a_model_name_with_controls_is_shown_escaped(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    stored(url)
    prices = json.dumps({"gpt-4o": {"input": 2.5, "output": 10}})
    env = clean_env(DATABASE_URL=url, ASSISTANT_PRICES=prices)

    table = run_assistant("usage", "--by", "model", env=env, cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert len(lines) == 5, table.stdout  # the window, the header, the model, the total, a note
    assert lines[2].startswith(f"{SHOWN}  ")
    assert lines[3].startswith("total ")
    assert lines[4].startswith(f"no price for {SHOWN} in ASSISTANT_PRICES")
    for control in ("\x1b", "\u202e", "\x9b", "\t"):
        assert control not in table.stdout

    report = run_assistant("usage", "--by", "model", "--json", env=env, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert len(report.stdout.splitlines()) == 1
    for control in ("\x1b", "\u202e", "\x9b"):
        assert control not in report.stdout
    # Escaped as JSON escapes: a reader of the JSON gets the name exactly as it was.
    document = json.loads(report.stdout)
    assert [group["model"] for group in document["groups"]] == [HOSTILE]
    assert document["unpriced_models"] == [HOSTILE]
