"""`assistant channels list|set|export|import` on both backends: the round trip through a
file (JSON and YAML), a bad file changing nothing, and one-line errors (exit status 2)."""

from __future__ import annotations

import json

import pytest

from context.channels import ChannelConfig
from context.storage import open_store
from tests.cli import run_cli


def seeded(url: str) -> list[ChannelConfig]:
    store = open_store(url)
    try:
        store.set_channel_config(ChannelConfig(team="T1", channel="*", persona="Be kind.",
                                               editors=("U0EDITOR1",)))  # fmt: skip
        store.set_channel_config(ChannelConfig(
            team="T1", channel="C1", persona_name="pirate", model="gpt-x", enabled=True,
            access="listed", users=("U1",), groups=("S1",), username="Captain",
            icon_emoji=":ship:",
        ))  # fmt: skip
        store.set_channel_config(ChannelConfig(team="T2", channel="C9", enabled=False))
        return store.channel_configs()
    finally:
        store.close()


def without_times(configs: list[ChannelConfig]) -> list[dict]:
    return [c.model_dump(exclude={"updated_at"}) for c in configs]


@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_export_then_import_into_another_store_gives_the_same_settings(
    store_url, postgres_url, tmp_path, suffix
):
    original = seeded(store_url)
    path = tmp_path / f"channels.{suffix}"
    result = run_cli("channels", "export", str(path), env={"DATABASE_URL": store_url})
    assert result.returncode == 0, result.stderr
    assert b"3 settings written" in result.stderr
    # Into the other backend's store (it must exist: opened once, as serve would).
    other = postgres_url if store_url.startswith("sqlite") else f"sqlite:///{tmp_path}/o.db"
    open_store(other).close()
    result = run_cli("channels", "import", str(path), env={"DATABASE_URL": other})
    assert result.returncode == 0, result.stderr
    store = open_store(other)
    try:
        assert without_times(store.channel_configs()) == without_times(original)
    finally:
        store.close()
    listed = run_cli("channels", "list", "--team", "T1", env={"DATABASE_URL": other})
    lines = listed.stdout.decode().splitlines()
    assert [line.split("\t")[:2] for line in lines] == [["T1", "*"], ["T1", "C1"]]


def test_set_changes_only_what_it_is_given(store_url, tmp_path):
    seeded(store_url)
    env = {"DATABASE_URL": store_url}
    result = run_cli("channels", "set", "T1", "C1", "--persona", "Speak French.", "--off",
                     "--unset", "username", "--locale", "pt_BR", env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    store = open_store(store_url)
    try:
        kept = store.channel_config("T1", "C1")
    finally:
        store.close()
    assert (kept.persona, kept.persona_name, kept.enabled, kept.model) == (
        "Speak French.",
        None,
        False,
        "gpt-x",
    )
    assert (kept.username, kept.icon_emoji, kept.groups) == (None, ":ship:", ("S1",))
    assert kept.locale == "pt_BR"  # the language fixed in the channel


def test_the_tools_of_a_channel_are_set_listed_and_unset(store_url):
    seeded(store_url)
    env = {"DATABASE_URL": store_url}
    result = run_cli("channels", "set", "T1", "C1", "--slack-search",
                     "--search-channel-types", "public_channel,im",
                     "--tool-servers", "shop,files__read_file", env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    listed = run_cli("channels", "list", env=env).stdout.decode()
    assert (
        'slack_search=true search_channel_types=["public_channel", "im"] '
        'tool_servers=["shop", "files__read_file"]'
    ) in listed
    # "" is no server at all; --unset takes each back to the default's.
    assert run_cli("channels", "set", "T1", "C1", "--tool-servers", "", env=env).returncode == 0
    assert "tool_servers=[]" in run_cli("channels", "list", env=env).stdout.decode()
    result = run_cli("channels", "set", "T1", "C1", "--no-slack-search", "--unset",
                     "tool_servers", "--unset", "search_channel_types", env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    store = open_store(store_url)
    try:
        kept = store.channel_config("T1", "C1")
    finally:
        store.close()
    assert (kept.slack_search, kept.search_channel_types, kept.tool_servers) == (False, None, None)


def test_strict_mentions_are_set_and_given_back_to_the_default(store_url):
    seeded(store_url)
    env = {"DATABASE_URL": store_url}

    def kept_strict() -> bool | None:
        store = open_store(store_url)
        try:
            return store.channel_config("T1", "C1").strict_mentions
        finally:
            store.close()

    result = run_cli("channels", "set", "T1", "C1", "--strict-mentions", env=env)
    assert result.returncode == 0, result.stderr
    assert kept_strict() is True
    listed = run_cli("channels", "list", "--team", "T1", env=env)
    assert b"strict_mentions=true" in listed.stdout
    assert run_cli("channels", "set", "T1", "C1", "--any-followup", env=env).returncode == 0
    assert kept_strict() is False
    unset = run_cli("channels", "set", "T1", "C1", "--unset", "strict_mentions", env=env)
    assert unset.returncode == 0, unset.stderr
    assert kept_strict() is None


@pytest.mark.parametrize(
    ("args", "document", "error"),
    [
        (("set", "T1", "C1", "--icon-emoji", "ship"), None, "icon_emoji"),
        (("set", "T1", "C1", "--editors", "U2"), None, "editors are named in the workspace"),
        (("set", "T1", "C1", "--locale", "fr"), None, "--locale: invalid choice: 'fr'"),
        (("set", "T1", "C1", "--tool-servers", "shop,bad name"), None,
         "tool_servers: 'bad name' is not an MCP server name"),
        (("set", "T1", "C1", "--search-channel-types", "everything"), None,
         "search_channel_types.0: Input should be"),
        (("import", "FILE"), {"channels": [{"team": "T1", "channel": "C2"}, {"team": "T1"}]},
         "channel 2: channel: Field required"),
        (("import", "FILE"), {"channels": [{"team": "T1", "channel": "C2", "colour": "red"}]},
         "colour"),
        (("import", "FILE"), [1, 2], 'has no "channels" list'),
    ],
)  # fmt: skip
def test_a_mistake_is_one_line_exit_2_and_changes_nothing(
    store_url, tmp_path, args, document, error
):
    before = without_times(seeded(store_url))
    path = tmp_path / "in.json"
    path.write_text(json.dumps(document))
    args = tuple(str(path) if a == "FILE" else a for a in args)
    result = run_cli("channels", *args, env={"DATABASE_URL": store_url})
    assert result.returncode == 2
    lines = result.stderr.decode().strip().splitlines()
    assert error in lines[-1] and lines[-1].startswith("assistant channels")
    store = open_store(store_url)
    try:
        assert without_times(store.channel_configs()) == before
    finally:
        store.close()
