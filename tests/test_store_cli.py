"""`assistant threads` and `assistant export` on a database the test fills, on both backends."""

from __future__ import annotations

import json

from context.canonical import load_log
from context.storage import EntryMeta, ThreadKey, open_store
from tests.cli import DATA, run_cli

SEED = load_log((DATA / "aya-lunch.json").read_bytes())
LUNCH = ThreadKey("T0AYA", "C0LUNCH", "1743769980.000100")
OTHER = ThreadKey("T0AYA", "C0OTHER", "1743770000.000200")


def fill(url: str) -> None:
    store = open_store(url)
    try:
        for entry in SEED.entries:
            meta = EntryMeta(model="gpt-test", prompt_tokens=100, completion_tokens=10)
            store.append(LUNCH, entry.content, entry.timestamp, meta)
        store.append(OTHER, "persona", "2025-04-04T13:00:00Z")
    finally:
        store.close()


def test_threads_lists_each_thread_with_its_id(store_url, tmp_path):
    fill(store_url)
    result = run_cli("threads", env={"DATABASE_URL": store_url}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert [line.split("\t")[0] for line in lines] == [str(OTHER), str(LUNCH)]
    assert lines[1].split("\t")[1:2] == ["4 entries"]
    assert lines[1].endswith("440 tokens")


def test_export_writes_a_log_that_validates_and_renders(store_url, tmp_path):
    fill(store_url)
    env = {"DATABASE_URL": store_url}
    printed = run_cli("export", str(LUNCH), env=env, cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout) == [e.as_dict() for e in SEED.entries]

    out = tmp_path / "lunch.json"
    written = run_cli("export", str(LUNCH), "--out", str(out), env=env, cwd=tmp_path)
    assert written.returncode == 0 and written.stdout == b""
    assert out.read_bytes() == printed.stdout
    assert run_cli("validate", str(out)).returncode == 0
    shown = run_cli("show", str(out))
    assert shown.stdout == (DATA / "aya-lunch.console.txt").read_bytes()


def test_export_of_an_unknown_or_malformed_thread_is_a_clear_error(store_url, tmp_path):
    fill(store_url)
    env = {"DATABASE_URL": store_url}
    unknown = run_cli("export", "T0AYA/C0NONE/1.2", env=env, cwd=tmp_path)
    assert unknown.returncode == 2
    assert unknown.stderr.decode().strip() == (
        "assistant export: no thread T0AYA/C0NONE/1.2 in the store (see `assistant threads`)"
    )
    malformed = run_cli("export", "C0LUNCH", env=env, cwd=tmp_path)
    assert malformed.returncode == 2
    assert "is not of the form TEAM/CHANNEL/THREAD_TS" in malformed.stderr.decode()


def test_the_default_store_is_assistant_db_in_the_working_directory(tmp_path):
    fill(f"sqlite:///{tmp_path / 'assistant.db'}")
    result = run_cli("threads", cwd=tmp_path, env={"DATABASE_URL": ""})
    assert result.returncode == 0, result.stderr
    assert str(LUNCH) in result.stdout.decode()


def test_an_unsupported_database_url_is_a_clear_error(tmp_path):
    result = run_cli("threads", cwd=tmp_path, env={"DATABASE_URL": "mysql://me:pw@db/x"})
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr and b"pw" not in result.stderr
    assert b"'mysql' is not supported" in result.stderr


def test_an_unreachable_database_is_a_clear_error(tmp_path):
    url = "postgresql://someone:hunter2@127.0.0.1:9/nothing"  # port 9: nothing listens
    result = run_cli("threads", cwd=tmp_path, env={"DATABASE_URL": url})
    assert result.returncode == 2
    message = result.stderr.decode()
    assert message.startswith("assistant threads: cannot open the store at postgresql")
    assert "hunter2" not in message and "Traceback" not in message
