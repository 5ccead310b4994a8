"""`assistant validate` on broken files: every problem, with entry and field, no traceback."""

import json
import os
import subprocess
import sys

import pytest

from tests.cli import DATA, ROOT, run_cli

BROKEN = DATA / "broken"

# file -> the (where, field) of every problem it must report, and nothing else
EXPECTED = {
    "gap.json": {("entry 2", "index")},
    "repeat.json": {("entry 2", "index")},
    "wrong-turn.json": {("entry 3", "turn")},
    "bad-timestamp.json": {("entry 1", "timestamp")},
    "unknown-role.json": {("entry 1", "role")},
    "system-content-object.json": {("entry 0", "content")},
    "user-content-string.json": {("entry 1", "content")},
    "unknown-toolcall.json": {("entry 2", "content.toolCall")},
    "missing-argument.json": {("entry 3", "content.text")},
    "bad-argument-types.json": {("entry 2", "content.ascending"), ("entry 2", "content.limit")},
    "entry-not-object.json": {("entry 2", "(entry)")},
    "several-problems.json": {
        ("entry 1", "userid"),
        ("entry 2", "turn"),
        ("entry 3", "timestamp"),
        ("entry 3", "content.toolCall"),
    },
    "not-json.json": {("file", "(document)")},
    "not-array.json": {("file", "(document)")},
    "empty.json": {("file", "(document)")},
    "non-utf8.json": {("file", "(encoding)")},
}


def problems_in(stderr: bytes, source: str) -> set[tuple[str, str]]:
    found = set()
    for line in stderr.decode().splitlines():
        assert line.startswith(f"{source}: "), line
        rest = line[len(source) + 2 :]
        if rest.endswith(("problem", "problems")):
            continue
        where, _, after = rest.partition(", ")
        field, _, message = after.partition(": ")
        assert message, line
        found.add((where, field))
    return found


def test_every_broken_file_is_covered():
    assert {p.name for p in BROKEN.iterdir()} == set(EXPECTED)
    assert len(EXPECTED) >= 12


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_file_reports_every_problem(name):
    path = BROKEN / name
    result = run_cli("validate", str(path))
    assert result.returncode == 1
    assert b"Traceback" not in result.stderr + result.stdout
    assert problems_in(result.stderr, str(path)) == EXPECTED[name]


@pytest.mark.parametrize("name", ["several-problems.json", "non-utf8.json"])
def test_broken_input_on_stdin(name):
    result = run_cli("validate", "-", stdin=(BROKEN / name).read_bytes())
    assert result.returncode == 1
    assert problems_in(result.stderr, "<stdin>") == EXPECTED[name]


@pytest.mark.parametrize(
    "path",
    [DATA / "aya-lunch.json", *sorted((ROOT / "examples").glob("*.json"))],
    ids=lambda p: p.name,
)
def test_valid_files_pass(path):
    result = run_cli("validate", str(path))
    assert result.returncode == 0, result.stderr
    count = len(json.loads(path.read_bytes()))
    assert result.stdout.decode().strip() == f"{path}: valid, {count} entries"


def test_show_refuses_a_broken_file_with_its_problems():
    result = run_cli("show", str(BROKEN / "gap.json"))
    assert result.returncode == 1
    assert result.stdout == b""
    assert b"entry 2, index: expected 2, found 3 (gap)" in result.stderr


def test_missing_file_is_a_clear_error():
    result = run_cli("validate", "no-such-file.json")
    assert result.returncode == 2
    assert result.stderr.decode().strip() == (
        "assistant validate: cannot read no-such-file.json: No such file or directory"
    )


@pytest.mark.parametrize("command", ["show", "validate", "schema", "threads", "export"])
def test_every_command_has_help(command):
    result = run_cli(command, "--help")
    assert result.returncode == 0
    assert result.stdout.decode().startswith(f"usage: assistant {command}")


def test_a_reader_that_goes_away_ends_the_command_quietly():
    """`assistant schema | head`: the pipe closes before everything is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # no reader at all: the first write fails
    try:
        result = subprocess.run(
            [sys.executable, "-m", "assistant.cli", "schema"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 141
    assert result.stderr == b""
