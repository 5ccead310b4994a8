"""`assistant memory list|add|edit|forget|export|import|audit` on both backends: the round trip
through a file, the one-line errors with exit status 2 that change nothing, the audit."""

from __future__ import annotations

import json

import pytest

from context.storage import open_store
from tests.cli import run_cli


def memory(url: str, *args: str, stdin: bytes | None = None):
    return run_cli("memory", *args, env={"DATABASE_URL": url}, stdin=stdin)


def kept(url: str, team: str = "T1", channel: str = "C1") -> list[tuple[str, str, str]]:
    store = open_store(url)
    try:
        return [(m.text, m.author, m.source) for m in store.memories(team, channel)]
    finally:
        store.close()


def test_add_list_forget_and_the_audit(store_url):
    open_store(store_url).close()
    added = memory(store_url, "add", "T1", "C1", "deploys freeze on Fridays", "--author", "U1")
    assert added.returncode == 0, added.stderr
    memory(store_url, "add", "T1", "*", "the wiki is at go/wiki")
    listed = memory(store_url, "list", "T1", "C1")
    [line] = listed.stdout.decode().splitlines()
    name, at, author, source, text = line.split("\t")
    assert (name, author, source, text) == ("m1", "U1", "cli", '"deploys freeze on Fridays"')
    assert at.startswith("20")
    gone = memory(store_url, "forget", "T1", "C1", "m1")
    assert gone.returncode == 0 and kept(store_url) == []
    audit = memory(store_url, "audit", "T1").stdout.decode().splitlines()
    assert [line.split("\t")[1:6] for line in audit] == [
        ["C1", "m1", "added", "U1", "cli"],
        ["*", "m2", "added", "cli", "cli"],
        ["C1", "m1", "forgotten", "cli", "cli"],
    ]


def test_edit_changes_the_text_keeps_who_and_when_and_is_audited(store_url):
    open_store(store_url).close()
    memory(store_url, "add", "T1", "C1", "deploys freeze on Fridays", "--author", "U1")
    before = memory(store_url, "list", "T1", "C1").stdout.decode().split("\t")
    edited = memory(store_url, "edit", "T1", "C1", "m1", "  deploys freeze on Thursdays\x07 ")
    assert edited.returncode == 0, edited.stderr
    assert kept(store_url) == [("deploys freeze on Thursdays", "U1", "cli")]
    after = memory(store_url, "list", "T1", "C1").stdout.decode().split("\t")
    assert after[:4] == before[:4]  # the same memory: its id, when and who asked
    audit = memory(store_url, "audit", "T1", "C1").stdout.decode().splitlines()
    assert [line.split("\t")[2:] for line in audit][-1] == [
        "m1",
        "edited",
        "cli",
        "cli",
        '"deploys freeze on Thursdays"',
    ]


def test_export_then_import_into_another_channel_keeps_who_when_and_where_from(store_url, tmp_path):
    open_store(store_url).close()
    memory(store_url, "add", "T1", "C1", "one", "--author", "U1")
    memory(store_url, "add", "T1", "C1", "two\nlines", "--author", "U2")
    path = tmp_path / "memory.json"
    assert memory(store_url, "export", "T1", "C1", str(path)).returncode == 0
    result = memory(store_url, "import", "T1", "C2", str(path))
    assert result.returncode == 0, result.stderr
    assert kept(store_url, channel="C2") == kept(store_url)
    exported = json.loads(path.read_text())["memories"]
    store = open_store(store_url)
    try:
        assert [m.created_at for m in store.memories("T1", "C2")] == [
            m["created_at"] for m in exported
        ]
    finally:
        store.close()


@pytest.mark.parametrize(
    ("args", "document", "error"),
    [
        (("add", "T1", "C1", " "), None, "the memory is empty"),
        (("add", "T1", "C1", "x" * 1001), None, "at most 1000"),
        (("add", "t1", "C1", "x"), None, "is not a Slack workspace id"),
        (("add", "T1", "C1", "x", "--author", "bob"), None, "--author 'bob'"),
        (("forget", "T1", "C1", "m999"), None, "no memory m999 in C1"),
        (("forget", "T1", "C1", "lunch"), None, "is not a memory's id"),
        (("edit", "T1", "C1", "m1", " \x00 "), None, "the memory is empty"),
        (("edit", "T1", "C1", "m1", "x" * 1001), None, "at most 1000"),
        (("edit", "T1", "C2", "m1", "x"), None, "no memory m1 in C2"),
        (("edit", "T1", "C1", "m999", "x"), None, "no memory m999 in C1"),
        (("edit", "T1", "C1", "first", "x"), None, "is not a memory's id"),
        (("edit", "T1", "c1", "m1", "x"), None, "is not a Slack channel id"),
        (("import", "T1", "C1", "FILE"), {"memories": [{"text": "ok"}, {"text": ""}]},
         "memory 2: text: the memory is empty"),
        (("import", "T1", "C1", "FILE"), {"memories": [{"text": "ok", "colour": "red"}]},
         "memory 1: unknown field 'colour'"),
        (("import", "T1", "C1", "FILE"), {"memories": [{"text": "ok", "created_at": "now"}]},
         "created_at: not a UTC time"),
        (("import", "T1", "C1", "FILE"), [1, 2], 'has no "memories" list'),
    ],
)  # fmt: skip
def test_a_mistake_is_one_line_exit_2_and_changes_nothing(tmp_path, args, document, error):
    store_url = f"sqlite:///{tmp_path / 'store.db'}"  # the command's checks: one backend will do
    open_store(store_url).close()
    memory(store_url, "add", "T1", "C1", "kept", "--author", "U1")
    path = tmp_path / "in.json"
    path.write_text(json.dumps(document))
    args = tuple(str(path) if a == "FILE" else a for a in args)
    result = memory(store_url, *args)
    assert result.returncode == 2
    lines = result.stderr.decode().strip().splitlines()
    assert error in lines[-1] and lines[-1].startswith("assistant memory")
    assert kept(store_url) == [("kept", "U1", "cli")]


def test_channels_set_memory_is_kept_and_unset(tmp_path):
    store_url = f"sqlite:///{tmp_path / 'store.db'}"
    open_store(store_url).close()
    env = {"DATABASE_URL": store_url}
    assert run_cli("channels", "set", "T1", "C1", "--memory", "editors", env=env).returncode == 0
    store = open_store(store_url)
    assert store.channel_config("T1", "C1").memory == "editors"
    store.close()
    bad = run_cli("channels", "set", "T1", "C1", "--memory", "everyone", env=env)
    assert bad.returncode == 2 and b"invalid choice: 'everyone'" in bad.stderr
    assert run_cli("channels", "set", "T1", "C1", "--unset", "memory", env=env).returncode == 0
    store = open_store(store_url)
    assert store.channel_config("T1", "C1").memory is None
    store.close()
