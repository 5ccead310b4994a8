"""Eval runs kept in the store with an id (docs/evaluation.md, "Saved runs"): every `assistant
eval` kept there as well as, with --save-run, on disk; listed by `eval runs`, scored again and
compared by id as by directory, deleted. In process (tests/cli.py), against the fake model
over HTTP and a real SQLite store."""

from __future__ import annotations

import json
import shlex
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from context.storage import open_store
from tests.cli import ROOT, invoke
from tests.eval.logs import POST, history_call, log_json, post_call
from tests.process import clean_env

USAGE = {"prompt_tokens": 1_000, "completion_tokens": 100, "total_tokens": 1_100}
KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


@pytest.fixture
def store_url(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    open_store(url).close()
    return url


@pytest.fixture
def env(model, store_url):
    return clean_env(
        OPENAI_API_KEY=ids.OPENAI_API_KEY,
        OPENAI_BASE_URL=model.base_url,
        OPENAI_MAX_RETRIES="0",
        DATABASE_URL=store_url,
    )


@pytest.fixture
def log_file(tmp_path):
    path = tmp_path / "lunch.json"
    path.write_text(log_json(), encoding="utf-8")
    return path


class Ran:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = code, stdout, stderr

    def json(self) -> dict:
        return json.loads(self.stdout)


def assistant(env, tmp_path, *args: str) -> Ran:
    """`assistant eval ARGS`, a case at a time, so scripted answers keep their order."""
    if args and args[0] not in ("rescore", "diff", "runs") and "--concurrency" not in args:
        args = (*args, "--concurrency", "1")
    done = invoke(("eval", *args), env=env, cwd=tmp_path)
    ran = Ran(done.returncode, done.stdout.decode(), done.stderr.decode())
    assert "Traceback" not in ran.stderr
    return ran


def answer(model, text: str | None = POST) -> None:
    """The two cases of the log: one reads the history (as recorded), one posts `text` (or
    finishes without posting: the other kind of step, a failed case)."""
    second = post_call(text) if text is not None else ("finishRequest", {"reasoning": "no"})
    model.script(
        replies.tool_calls(history_call(), usage=USAGE),
        replies.tool_calls(second, usage=USAGE),
    )


def test_every_run_is_kept_with_an_id_listed_rescored_and_diffed_by_it(
    env, model, log_file, tmp_path
):
    answer(model)
    first = assistant(env, tmp_path, str(log_file), "--json")
    assert first.returncode == 0, first.stderr
    assert "eval: the run is kept in the store as run 1" in first.stderr
    assert not any(p.is_dir() for p in tmp_path.iterdir())  # nothing on disk without --save-run
    # With --save-run: on disk and in the store, the same results.
    answer(model, None)
    second = assistant(env, tmp_path, str(log_file), "--save-run", "saved", "--json")
    assert second.returncode == 0, second.stderr
    assert "saved in saved" in second.stderr and "as run 2" in second.stderr

    listed = assistant(env, tmp_path, "runs", "--json").json()["runs"]
    assert [run["id"] for run in listed] == [2, 1]  # newest first
    assert listed[1]["label"] == str(log_file) and listed[1]["status"] == "finished"
    assert listed[1]["configs"][0]["pass@1"] == first.json()["summary"][0]["pass@1"]
    assert listed[0]["configs"][0]["pass@1"] == 0.5
    table = assistant(env, tmp_path, "runs").stdout.splitlines()
    assert table[0].split() == ["id", "when", "set", "configs", "pass@1", "pass^k", "status"]
    assert table[-1] == "2 runs kept"

    asked = len(model.requests)
    by_id = assistant(env | {"OPENAI_API_KEY": ""}, tmp_path, "rescore", "1", "--json")
    assert by_id.returncode == 0, by_id.stderr
    assert len(model.requests) == asked  # no model asked
    assert by_id.json()["summary"] == first.json()["summary"]
    assert by_id.json()["cases"] == first.json()["cases"]
    assert "the run scored again is kept in the store as run 3" in by_id.stderr
    # The store and the directory are read by the same code: the same answers, the same scores.
    from_store = assistant(env, tmp_path, "rescore", "2", "--json", "--no-store").json()
    from_disk = assistant(env, tmp_path, "rescore", "saved", "--json", "--no-store").json()
    assert from_store["cases"] == from_disk["cases"] == second.json()["cases"]
    assert [run["id"] for run in assistant(env, tmp_path, "runs", "--json").json()["runs"]] == [
        3,
        2,
        1,
    ]

    diff = assistant(env, tmp_path, "diff", "1", "2", "--fail-on-regression")
    assert diff.returncode == 1, diff.stderr
    assert diff.stdout.splitlines()[1].split() == [f"{log_file}@4", "1/1", "0/1", "regressed"]
    assert diff.stdout.splitlines()[3].startswith("A run 1: ")
    # An id beside a directory: the same run both ways, nothing changed.
    same = assistant(env, tmp_path, "diff", "2", "saved", "--json")
    assert same.returncode == 0 and same.json()["counts"]["unchanged"] == 2


def test_a_kept_run_keeps_no_secret_and_is_deleted_whole(env, model, log_file, tmp_path, store_url):
    answer(model, f"Use {KEY} for lunch")
    assert assistant(env, tmp_path, str(log_file)).returncode == 0
    answer(model)
    assert assistant(env, tmp_path, str(log_file)).returncode == 0
    database = store_url.removeprefix("sqlite:///")
    with sqlite3.connect(database) as connection:
        texts = connection.execute("SELECT result FROM eval_run_results").fetchall()
    assert texts and not any(KEY in text for (text,) in texts)

    deleted = assistant(env, tmp_path, "runs", "--delete", "1")
    assert (deleted.returncode, deleted.stdout) == (0, "eval runs: 1 runs deleted\n")
    assert [run["id"] for run in assistant(env, tmp_path, "runs", "--json").json()["runs"]] == [2]
    with sqlite3.connect(database) as connection:
        for table in ("eval_run_logs", "eval_run_results"):
            rows = connection.execute(f"SELECT DISTINCT run_id FROM {table}").fetchall()
            assert rows == [(2,)], table
    gone = assistant(env, tmp_path, "rescore", "1")
    assert gone.returncode == 2
    assert gone.stderr.strip().endswith("no eval run 1 in the store (see `assistant eval runs`)")
    assert assistant(env, tmp_path, "runs", "--delete", "1").returncode == 2
    everything = assistant(env, tmp_path, "runs", "--delete-before", "2999-01-01")
    assert everything.stdout == "eval runs: 1 runs deleted\n"


def test_no_store_keeps_nothing_and_a_missing_store_is_said(env, model, log_file, tmp_path):
    answer(model)
    ran = assistant(env, tmp_path, str(log_file), "--no-store")
    assert ran.returncode == 0 and "kept in the store" not in ran.stderr
    assert assistant(env, tmp_path, "runs", "--json").json() == {"runs": []}
    answer(model)
    elsewhere = env | {"DATABASE_URL": f"sqlite:///{tmp_path / 'none.db'}"}
    missing = assistant(elsewhere, tmp_path, str(log_file))
    assert missing.returncode == 0
    assert "no store at" in missing.stderr and "nothing kept there" in missing.stderr
    assert not (tmp_path / "none.db").exists()  # eval never makes a store
    assert assistant(env, tmp_path, "runs", "--delete", "x").returncode == 2


def sh_blocks(heading: str) -> list[list[list[str]]]:
    """Each ```sh block of a section of docs/evaluation.md, as the words of its lines."""
    text = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    section = section[: section.index("\n### ", 1)]
    blocks = section.split("```sh\n")[1:]
    return [[shlex.split(line) for line in b[: b.index("\n```")].splitlines()] for b in blocks]


def test_the_documented_workflows_run_on_the_demo_thread(tmp_path):
    """ "Before a model change" by ids, and "Watching live quality", as docs/evaluation.md
    writes them."""
    by_directory, by_id = sh_blocks("### Before a model change")
    [live] = sh_blocks("### Watching live quality")
    assert live[0] == ["ASSISTANT_JUDGE_SAMPLE=1", "assistant", "demo"]
    database = tmp_path / "demo.db"
    played = invoke(
        ("demo", "--database", str(database)),
        env=clean_env(ASSISTANT_JUDGE_SAMPLE="1"),
        cwd=tmp_path,
    )
    assert played.returncode == 0, played.stderr
    env = clean_env(DATABASE_URL=f"sqlite:///{database}")
    for words in by_directory[1:] + by_id + live[1:]:
        assert words[0] == "assistant", words
        done = invoke(tuple(words[1:]), env=env, cwd=tmp_path)
        assert done.returncode == 0, (words, done.stderr.decode())
        assert b"Traceback" not in done.stderr
        if words[1:3] == ["eval", "runs"]:
            listed = done.stdout.decode().splitlines()
            assert [line.split()[0] for line in listed[1:-1]] == ["3", "2", "1"]
        if words[1:3] == ["eval", "verdicts"]:
            assert "2 answers judged" in done.stdout.decode()
            assert "demo-model" in done.stdout.decode()
        if words[1:3] == ["eval", "diff"]:
            assert "0 regressed, 0 improved, 6 unchanged" in done.stderr.decode()
    store = open_store(f"sqlite:///{database}")
    try:
        verdicts = store.recent_verdicts(10)
        assert [v.verdict for v in verdicts] == ["good", "good"]
        # A side record of the thread: purged with it.
        store.purge(datetime.now(UTC) + timedelta(days=1))
        assert store.recent_verdicts(10) == []
    finally:
        store.close()
