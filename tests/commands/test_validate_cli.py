"""`assistant validate` on broken files: every problem, with entry and field, no traceback."""

import json

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
}
# Not a log at all: no text to check (docs/command-line.md: a file that is not UTF-8 text
# exits 2, with one line).
NOT_TEXT = "non-utf8.json"


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
    assert {p.name for p in BROKEN.iterdir()} == {*EXPECTED, NOT_TEXT}
    assert len(EXPECTED) >= 12


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_file_reports_every_problem(name):
    path = BROKEN / name
    result = run_cli("validate", str(path))
    assert result.returncode == 1
    assert b"Traceback" not in result.stderr + result.stdout
    assert problems_in(result.stderr, str(path)) == EXPECTED[name]


def test_broken_input_on_stdin():
    result = run_cli("validate", "-", stdin=(BROKEN / "several-problems.json").read_bytes())
    assert result.returncode == 1
    assert problems_in(result.stderr, "<stdin>") == EXPECTED["several-problems.json"]


@pytest.mark.parametrize("command", ["validate", "show", "replay"])
@pytest.mark.parametrize("binary", [(BROKEN / NOT_TEXT).read_bytes(), bytes(range(256)) * 4])
def test_a_file_that_is_not_text_is_a_usage_error(command, binary, tmp_path):
    (tmp_path / "blob.json").write_bytes(binary)
    more = ["--demo-model"] if command == "replay" else []
    for source, stdin in (("blob.json", None), ("-", binary)):
        result = run_cli(command, source, *more, stdin=stdin, cwd=tmp_path)
        name = "<stdin>" if source == "-" else source
        byte = binary.decode("utf-8", "replace").index("\ufffd")
        assert result.returncode == 2, result.stderr
        assert result.stderr.decode() == (
            f"assistant {command}: {name} is not UTF-8 text (byte {byte})\n"
        )
        assert result.stdout == b""


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


def nested(depth: int) -> bytes:
    """A log whose one entry's content nests `depth` objects inside the array and entry."""
    content: dict = {"userid": "<@U1>", "text": "hi"}
    inner = content
    for _ in range(depth - 3):
        inner["x"] = inner = {}
    entry = {"index": 0, "turn": 0, "timestamp": "2025-04-04T12:33:00Z", "role": "user"}
    return json.dumps([{**entry, "content": content}]).encode()


DEEP = {
    "100,000 [": b"[" * 100_000,
    "100,000 [ ]": b"[" * 100_000 + b"]" * 100_000,
    "65 levels": nested(65),
}


@pytest.mark.parametrize("document", DEEP, ids=list(DEEP))
@pytest.mark.parametrize("command", ["validate", "show"])
def test_a_deeply_nested_document_is_one_problem(command, document):
    result = run_cli(command, "-", stdin=DEEP[document])
    assert result.returncode == 1
    assert result.stderr.decode().splitlines()[0] == (
        "<stdin>: file, (document): nested deeper than 64 arrays and objects"
    )
    assert b"Traceback" not in result.stderr


def test_nesting_up_to_the_limit_is_checked_as_usual():
    result = run_cli("validate", "-", stdin=nested(64))
    assert result.returncode == 1
    assert result.stderr.decode().splitlines()[0] == "<stdin>: entry 0, content.x: unknown field"


@pytest.mark.parametrize("command", ["show", "validate"])
def test_an_argument_too_long_for_a_file_name_is_a_clear_error(command):
    result = run_cli(command, "x" * 5000)
    assert result.returncode == 2
    message = result.stderr.decode()
    assert message.startswith(f"assistant {command}: cannot read {'x' * 80}… (5,000 characters): ")
    assert "File name too long" in message and len(message.splitlines()) == 1
    assert "Traceback" not in message


def test_version_is_the_installed_packages():
    import tomllib
    from importlib.metadata import version

    result = run_cli("--version")
    assert result.returncode == 0
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert version(project["name"]) == project["version"]
    assert result.stdout.decode() == f"assistant {project['version']}\n"
