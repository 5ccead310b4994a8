"""What the commands read is bounded and checked (docs/command-line.md, "Command line"): a device,
an endless pipe, a file nested 100,000 deep or not UTF-8 is one line on stderr and exit status 2,
never the machine's memory or a traceback; `channels import` keeps all of a file or, the database
failing part-way, none of it; `replay` checks where its report goes before it asks the model
anything; `channels set --persona-name` takes only a persona the personas file names."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from sqlalchemy import create_engine, text

from assistant.fakes import ids
from assistant.settings.input_files import MAX_INPUT_BYTES
from context.channels import ChannelConfig
from context.storage import database_url, open_store
from tests.cli import ROOT, run_cli
from tests.process import clean_env, run_assistant

EXAMPLE = ROOT / "examples" / "aya-lunch.json"
TOO_LARGE = "is larger than 64 MiB, the most read of one input"


def one_line(result: subprocess.CompletedProcess, command: str) -> str:
    """The one line of stderr a refusal is, with exit status 2 and no traceback."""
    stderr = result.stderr if isinstance(result.stderr, str) else result.stderr.decode()
    assert result.returncode == 2, stderr
    assert "Traceback" not in stderr
    lines = [
        line for line in stderr.splitlines() if not re.match(r"assistant [a-z ]+: store ", line)
    ]
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"{command}: "), stderr
    return lines[0]


def a_store(tmp_path) -> str:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    open_store(url).close()
    return url


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "/dev/zero"],
        ["show", "/dev/zero"],
        ["replay", "/dev/zero", "--demo-model"],
        ["channels", "import", "/dev/zero"],
        ["channels", "set", "T1", "C1", "--persona-file", "/dev/zero"],
        ["replay", str(EXAMPLE), "--demo-model", "--prompt-file", "/dev/zero"],
    ],
)
def test_an_endless_device_is_read_only_up_to_the_bound(args, tmp_path):
    env = clean_env(DATABASE_URL=a_store(tmp_path))
    result = run_assistant(*args, env=env, cwd=tmp_path)
    command = f"assistant {args[0]}"
    assert one_line(result, command) == f"{command}: /dev/zero {TOO_LARGE}"


@pytest.mark.parametrize("args", [["validate", "-"], ["show", "-"], ["channels", "import", "-"]])
def test_endless_standard_input_is_read_only_up_to_the_bound(args, tmp_path):
    env = clean_env(DATABASE_URL=a_store(tmp_path))
    with open("/dev/zero", "rb") as zeros:
        result = run_assistant(*args, env=env, cwd=tmp_path, stdin=zeros)
    command = f"assistant {args[0]}"
    assert one_line(result, command) == f"{command}: <stdin> {TOO_LARGE}"


def test_a_log_just_within_the_bound_is_read(tmp_path):
    # The bound is on what is read, not on what is valid: a log padded with spaces to the
    # bound's last byte is still read, and valid.
    padded = EXAMPLE.read_bytes()
    padded += b" " * (MAX_INPUT_BYTES - len(padded))
    result = run_cli("validate", "-", stdin=padded, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    over = run_cli("validate", "-", stdin=padded + b" ", cwd=tmp_path)
    assert one_line(over, "assistant validate") == f"assistant validate: <stdin> {TOO_LARGE}"


DEEP = "[" * 100_000


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (DEEP.encode(), "is nested deeper than 32 mappings and lists"),
        ("channels: [{team: T1, channel: C1, persona: Caf\u00e9}]".encode("latin-1"),
         "is not UTF-8 text (byte 47)"),
    ],
)  # fmt: skip
def test_a_deep_or_non_utf8_channels_file_is_one_line(content, expected, tmp_path):
    path = tmp_path / "channels.yaml"
    path.write_bytes(content)
    env = clean_env(DATABASE_URL=a_store(tmp_path))
    result = run_assistant("channels", "import", path.name, env=env, cwd=tmp_path)
    line = one_line(result, "assistant channels")
    assert line == f"assistant channels: {path.name} {expected}"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (("pirate:\n  - " + DEEP).encode(), "is nested deeper than 32 mappings and lists"),
        ("pirate: Arr, caf\u00e9\n".encode("latin-1"), "is not UTF-8 text (byte 16)"),
    ],
)
def test_a_deep_or_non_utf8_personas_file_is_one_line(content, expected, tmp_path):
    path = tmp_path / "personas.yaml"
    path.write_bytes(content)
    env = clean_env(DATABASE_URL=a_store(tmp_path), ASSISTANT_PERSONAS_FILE=path.name)
    args = ("channels", "set", "T1", "C1", "--persona-name", "pirate")
    line = one_line(run_assistant(*args, env=env, cwd=tmp_path), "assistant channels")
    assert line == f"assistant channels: ASSISTANT_PERSONAS_FILE: {path.name} {expected}"
    # The bot's start lists it among the settings' problems, as for any other.
    env.update(SLACK_BOT_TOKEN=ids.BOT_TOKEN, SLACK_APP_TOKEN=ids.APP_TOKEN,
               OPENAI_API_KEY=ids.OPENAI_API_KEY)  # fmt: skip
    started = run_assistant("run", env=env, cwd=tmp_path)
    assert started.returncode == 2, started.stderr
    assert "Traceback" not in started.stderr
    assert f"  ASSISTANT_PERSONAS_FILE: {path.name} {expected}\n" in started.stderr


def test_set_refuses_a_persona_name_the_personas_file_does_not_name(tmp_path):
    url = a_store(tmp_path)
    personas = tmp_path / "personas.yaml"
    personas.write_text("pirate: Answer like a pirate.\n", encoding="utf-8")
    env = clean_env(DATABASE_URL=url, ASSISTANT_PERSONAS_FILE=personas.name)
    args = ("channels", "set", "T1", "C1", "--persona-name")
    refused = run_assistant(*args, "ninja", env=env, cwd=tmp_path)
    assert one_line(refused, "assistant channels") == (
        f"assistant channels: --persona-name ninja: no such persona in {personas.name} (it names 1)"
    )
    without = clean_env(DATABASE_URL=url)
    refused = run_assistant(*args, "pirate", env=without, cwd=tmp_path)
    assert one_line(refused, "assistant channels") == (
        "assistant channels: --persona-name pirate: no such persona "
        "(ASSISTANT_PERSONAS_FILE is not set)"
    )
    store = open_store(url)
    try:
        assert store.channel_configs() == []
    finally:
        store.close()
    kept = run_assistant(*args, "pirate", env=env, cwd=tmp_path)
    assert kept.returncode == 0, kept.stderr
    assert 'persona_name="pirate"' in kept.stdout


def test_import_keeps_none_when_the_database_fails_part_way(store_url, tmp_path):
    store = open_store(store_url)
    try:
        store.set_channel_config(ChannelConfig(team="T1", channel="C1", persona="Be kind."))
    finally:
        store.close()
    # The database refuses the third row written: a real failure part-way, from the server.
    engine = create_engine(database_url(store_url))
    with engine.begin() as connection:
        if engine.dialect.name == "sqlite":
            connection.execute(text(
                "CREATE TRIGGER refuse BEFORE INSERT ON channel_settings WHEN NEW.channel = 'C3' "
                "BEGIN SELECT RAISE(ABORT, 'the disk is full'); END"
            ))  # fmt: skip
        else:
            connection.execute(text(
                "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                "IF NEW.channel = 'C3' THEN RAISE EXCEPTION 'the disk is full'; END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql"
            ))  # fmt: skip
            connection.execute(text(
                "CREATE TRIGGER refuse BEFORE INSERT ON channel_settings "
                "FOR EACH ROW EXECUTE FUNCTION refuse()"
            ))  # fmt: skip
    engine.dispose()
    path = tmp_path / "channels.yaml"
    path.write_text(
        "channels:\n"
        "  - {team: T1, channel: C1, persona: Be brief.}\n"
        "  - {team: T1, channel: C2, model: gpt-x}\n"
        "  - {team: T1, channel: C3, enabled: false}\n",
        encoding="utf-8",
    )
    result = run_assistant(
        "channels", "import", str(path), env=clean_env(DATABASE_URL=store_url), cwd=tmp_path
    )
    line = one_line(result, "assistant channels")
    assert line.startswith("assistant channels: the store at ")
    assert "failed: " in line and "the disk is full" in line
    store = open_store(store_url)
    try:
        [kept] = store.channel_configs()
        assert (kept.channel, kept.persona) == ("C1", "Be kind.")
    finally:
        store.close()


def test_replay_checks_its_report_can_be_written_before_asking_the_model(model, tmp_path):
    env = clean_env(
        OPENAI_API_KEY=ids.OPENAI_API_KEY, OPENAI_BASE_URL=model.base_url, OPENAI_MAX_RETRIES="0"
    )
    for flag, where in (("--report", "."), ("--out", "missing/out.json")):
        result = run_assistant("replay", str(EXAMPLE), flag, where, env=env, cwd=tmp_path)
        assert one_line(result, "assistant replay").startswith(
            f"assistant replay: cannot write {where}: "
        )
    assert model.requests == []
    assert sorted(os.listdir(tmp_path)) == []
