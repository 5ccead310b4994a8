"""`assistant show TEAM/CHANNEL/THREAD_TS`: a stored thread rendered like a saved file, from
an entry on (`--from`), and followed as other processes record in it (`--follow`), on SQLite
and PostgreSQL."""

from __future__ import annotations

from context.canonical import load_log
from context.render import render_log
from context.storage import EntryMeta, ThreadKey, open_store
from tests.cli import DATA, run_cli

SEED = load_log((DATA / "aya-lunch.json").read_bytes())
GOLDEN = (DATA / "aya-lunch.console.txt").read_bytes()
LUNCH = ThreadKey("T0AYA", "C0LUNCH", "1743769980.000100")


def fill(url: str) -> None:
    store = open_store(url)
    try:
        for entry in SEED.entries:
            store.append(LUNCH, entry.content, entry.timestamp, EntryMeta())
    finally:
        store.close()


def test_a_stored_thread_renders_like_its_file(store_url, tmp_path):
    fill(store_url)
    env = {"DATABASE_URL": store_url}
    shown = run_cli("show", str(LUNCH), env=env, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == GOLDEN

    tail = run_cli("show", str(LUNCH), "--from", "2", env=env, cwd=tmp_path)
    assert tail.stdout.decode() == render_log(SEED.entries[2:])
    last = run_cli("show", str(LUNCH), "--from", "-1", env=env, cwd=tmp_path)
    assert last.stdout.decode() == render_log(SEED.entries[3:])
    from_file = run_cli("show", str(DATA / "aya-lunch.json"), "--from", "-2")
    assert from_file.stdout == tail.stdout


def test_show_says_what_is_wrong_with_its_argument(tmp_path):
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}"}
    fill(env["DATABASE_URL"])
    missing = run_cli("show", "nothing-here.json", env=env, cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.decode().strip() == (
        "assistant show: cannot read nothing-here.json: no such file "
        "(nor is it a thread id TEAM/CHANNEL/THREAD_TS)"
    )
    unknown = run_cli("show", "T0AYA/C0LUNCH/1.2", env=env, cwd=tmp_path)
    assert unknown.returncode == 2
    assert b"no thread T0AYA/C0LUNCH/1.2 in the store" in unknown.stderr
    follow_file = run_cli("show", str(DATA / "aya-lunch.json"), "--follow", cwd=tmp_path)
    assert follow_file.returncode == 2
    assert b"--follow watches a stored thread" in follow_file.stderr
    # A file wins over a thread id of the same name.
    (tmp_path / "T0AYA" / "C0LUNCH").mkdir(parents=True)
    (tmp_path / str(LUNCH)).write_bytes((DATA / "aya-lunch.json").read_bytes())
    as_file = run_cli("show", str(LUNCH), env={"DATABASE_URL": "mysql://x/y"}, cwd=tmp_path)
    assert as_file.returncode == 0 and as_file.stdout == GOLDEN
