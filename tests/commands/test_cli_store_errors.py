"""Commands that run the bot (`run`, `serve`, `demo`) on a store that cannot be opened: one
line naming it (password hidden) and exit status 2, as `threads` does; and the demo's hints
never print a password."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import make_url

from assistant.fakes import ids
from context.storage import database_url
from tests.process import clean_env, run_assistant

PASSWORD = "hunter2-never-shown"
UNREACHABLE = f"postgresql://someone:{PASSWORD}@127.0.0.1:9/nothing"  # port 9: nobody listens


def bad_stores(tmp_path) -> dict[str, tuple[str, str]]:
    """Each kind of store that cannot be opened: its URL and the reason the driver gives."""
    (tmp_path / "notes.db").write_text("not a database, a shopping list\n" * 100)
    return {
        "missing directory": (
            f"sqlite:///{tmp_path / 'gone' / 'assistant.db'}",
            "unable to open database file",
        ),
        "not a database": (f"sqlite:///{tmp_path / 'notes.db'}", "file is not a database"),
        "unreachable": (UNREACHABLE, "Connection refused"),
    }


@pytest.mark.parametrize("command", ["run", "serve", "demo"])
@pytest.mark.parametrize("kind", ["missing directory", "not a database", "unreachable"])
def test_a_store_that_cannot_be_opened_is_one_line_and_status_2(command, kind, slack, tmp_path):
    url, reason = bad_stores(tmp_path)[kind]
    env = clean_env(
        DATABASE_URL=url,
        SLACK_BOT_TOKEN=ids.BOT_TOKEN,
        SLACK_APP_TOKEN=ids.APP_TOKEN,
        SLACK_SIGNING_SECRET=ids.SIGNING_SECRET,
        OPENAI_API_KEY=ids.OPENAI_API_KEY,
        SLACK_API_URL=slack.api_url,  # serve asks it about the token before the store
    )
    result = run_assistant(command, env=env, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    parsed = database_url(url)
    where = parsed.render_as_string()  # a SQLite file's URL: its file, the whole location
    if parsed.host is not None:  # a server's: its scheme, host and port, not its user
        where = f"{parsed.drivername}://{parsed.host}:{parsed.port}"
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"assistant {command}: cannot open the store at {where}: ")
    assert reason in lines[0]
    assert PASSWORD not in result.stderr + result.stdout
    assert "Traceback" not in result.stderr


def test_the_demo_never_prints_the_stores_password(postgres_url, tmp_path):
    # Trust auth: the password is never asked for, so the demo runs; it must not show it.
    url = make_url(postgres_url).set(username="postgres", password=PASSWORD)
    given = url.render_as_string(hide_password=False)
    result = run_assistant("demo", "--database", given, env=clean_env(), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert PASSWORD not in result.stdout + result.stderr
    hint = re.search(
        r"With DATABASE_URL set to the store at (\S+) \(its URL in full\), Try:", result.stderr
    )
    assert hint, result.stderr
    assert hint.group(1) == f"{database_url(given).drivername}://{url.host}:{url.port}"
    assert "\n  assistant threads\n" in result.stderr
