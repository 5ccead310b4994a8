"""`assistant routines add|list|pause|resume|delete|run-now` on a SQLite file: what each
changes, and one-line errors with exit status 2 for hostile arguments."""

from __future__ import annotations

import pytest

from context.storage import open_store
from tests.cli import run_cli


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    open_store(url).close()  # the store exists, as after `serve`
    return {"DATABASE_URL": url}


def lines(env: dict[str, str]) -> list[list[str]]:
    listed = run_cli("routines", "list", env=env)
    assert listed.returncode == 0, listed.stderr
    return [line.split("\t") for line in listed.stdout.decode().splitlines()]


def test_add_list_pause_resume_run_now_delete(env):
    weekly = ("--cron", "0 9 * * 1", "--tz", "Europe/Paris", "--creator", "U1")
    added = run_cli("routines", "add", "T1", "C1", "--prompt", "Summarize the week.", *weekly,
                    env=env)  # fmt: skip
    assert added.returncode == 0, added.stderr
    once = run_cli("routines", "add", "T1", "C2", "--prompt", "Remind us.", "--creator", "U2",
                   "--at", "2999-01-01T09:00+01:00", env=env)  # fmt: skip
    assert once.returncode == 0, once.stderr
    first, second = lines(env)
    assert first[:4] == ["1", "T1", "C1", 'cron "0 9 * * 1" Europe/Paris']
    assert first[4].startswith("next ") and first[5] == "last never" and first[6] == "by U1"
    assert second[3] == "once 2999-01-01T08:00:00.000000Z"
    assert second[4] == "next 2999-01-01T08:00:00.000000Z" and second[6] == "by U2"

    assert run_cli("routines", "pause", "1", env=env).returncode == 0
    assert lines(env)[0][4] == "paused (paused from the command line)"
    refused = run_cli("routines", "run-now", "1", env=env)
    assert (refused.returncode, refused.stderr.decode().splitlines()[-1]) == (
        2,
        "assistant routines: routine 1 is paused: resume it first",
    )
    assert run_cli("routines", "resume", "1", env=env).returncode == 0
    assert run_cli("routines", "run-now", "1", env=env).returncode == 0
    store = open_store(env["DATABASE_URL"])
    try:
        assert len(store.due_routines("9999-01-01T00:00:00.000000Z")) == 2
        assert [r.id for r in store.due_routines(store.routine(1).next_due)] == [1]
    finally:
        store.close()
    assert run_cli("routines", "delete", "2", env=env).returncode == 0
    assert [line[0] for line in lines(env)] == ["1"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["add", "T1", "C1", "--prompt", "x", "--creator", "U1", "--cron", "61 * * * *"],
            "is not a cron expression",
        ),
        (
            [
                "add",
                "T1",
                "C1",
                "--prompt",
                "x",
                "--creator",
                "U1",
                "--cron",
                "0 9 * * *",
                "--tz",
                "../../etc/passwd",
            ],
            "is not an IANA time zone",
        ),
        (
            ["add", "T1", "C1", "--prompt", "x", "--creator", "U1", "--at", "2020-01-01T00:00Z"],
            "has passed",
        ),
        (
            ["add", "T1", "C1", "--prompt", "x", "--creator", "U1", "--at", "2999-01-01T09:00"],
            "has no offset",
        ),
        (
            [
                "add",
                "T1",
                "C1",
                "--prompt",
                "x",
                "--creator",
                "U1",
                "--at",
                "2999-01-01T09:00Z",
                "--tz",
                "UTC",
            ],
            "--tz goes with --cron",
        ),
        (
            ["add", "T1", "C1\x1b[2J", "--prompt", "x", "--creator", "U1", "--cron", "* * * * *"],
            "not a channel id",
        ),
        (
            ["add", "T1", "C1", "--prompt", " ", "--creator", "U1", "--cron", "* * * * *"],
            "--prompt must be",
        ),
        (
            ["add", "T1", "C1", "--prompt", "x" * 5000, "--creator", "U1", "--cron", "* * * * *"],
            "--prompt must be",
        ),
        (
            ["add", "T1", "C1", "--prompt", "x", "--cron", "* * * * *", "--creator", "bob"],
            "not a user id",
        ),
        (["pause", "7"], "no routine 7"),
        (["resume", "7"], "no routine 7"),
        (["delete", "7"], "no routine 7"),
        (["run-now", "7"], "no routine 7"),
    ],
)
def test_bad_arguments_are_one_line_and_status_2(env, args, says):
    result = run_cli("routines", *args, env=env)
    error = result.stderr.decode().splitlines()[-1]
    assert result.returncode == 2 and says in error and "\x1b" not in error
    assert lines(env) == []


def test_an_id_that_is_not_a_number_is_a_usage_error(env):
    result = run_cli("routines", "pause", "1; drop table routines", env=env)
    assert result.returncode == 2 and b"is not a routine id" in result.stderr


def test_no_store_is_one_line(tmp_path):
    result = run_cli("routines", "list", env={"DATABASE_URL": f"sqlite:///{tmp_path}/none.db"})
    assert result.returncode == 2 and b"no store at" in result.stderr
