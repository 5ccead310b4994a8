"""`assistant threads --channel C --since WHEN --json`: the listing narrowed, and for scripts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from context.storage import ThreadKey, open_store
from context.storage.tables import moment
from tests.cli import run_cli
from tests.commands.test_store_cli import backdate

OLD = ThreadKey("T0AYA", "C0OLD", "1700000000.000100")
NEW = ThreadKey("T0AYA", "C0LUNCH", "1800000000.000100")
NEWER = ThreadKey("T0AYA", "C0LUNCH", "1800000001.000100")


def fill(url: str) -> None:
    """Three threads; NEWER written last; OLD (alone in its channel) ten days ago."""
    store = open_store(url)
    try:
        for key in (OLD, NEW, NEWER):
            store.append(key, "persona", "2025-04-04T13:00:00Z")
        store.append(NEWER, "more", "2025-04-04T13:00:01Z")
    finally:
        store.close()
    backdate(url, OLD, moment(datetime.now(UTC) - timedelta(days=10)))


def listed(url: str, *args: str, cwd) -> list[str]:
    result = run_cli("threads", *args, env={"DATABASE_URL": url}, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return [line.split("\t")[0] for line in result.stdout.decode().splitlines()]


def test_threads_are_filtered_by_channel_and_age(store_url, tmp_path):
    fill(store_url)
    assert listed(store_url, cwd=tmp_path) == [str(NEWER), str(NEW), str(OLD)]
    assert listed(store_url, "--channel", "C0LUNCH", cwd=tmp_path) == [str(NEWER), str(NEW)]
    assert listed(store_url, "--channel", "C0OLD", cwd=tmp_path) == [str(OLD)]
    assert listed(store_url, "--since", "2d", cwd=tmp_path) == [str(NEWER), str(NEW)]
    assert listed(store_url, "--since", "2d", "--channel", "C0OLD", cwd=tmp_path) == []
    assert listed(store_url, "--since", "11d", "--channel", "C0OLD", cwd=tmp_path) == [str(OLD)]
    eleven_days_ago = (datetime.now(UTC) - timedelta(days=11)).strftime("%Y-%m-%d")
    assert len(listed(store_url, "--since", eleven_days_ago, cwd=tmp_path)) == 3
    nine_days_ago = (datetime.now(UTC) - timedelta(days=9)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert len(listed(store_url, "--since", nine_days_ago, cwd=tmp_path)) == 2


def test_threads_json_is_one_object_per_line(store_url, tmp_path):
    fill(store_url)
    result = run_cli(
        "threads", "--json", "--channel", "C0LUNCH", env={"DATABASE_URL": store_url}, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [row["thread"] for row in rows] == [str(NEWER), str(NEW)]
    assert rows[0] == {
        "thread": str(NEWER),
        "team": "T0AYA",
        "channel": "C0LUNCH",
        "thread_ts": NEWER.thread_ts,
        "entries": 2,
        "created_at": rows[0]["created_at"],
        "updated_at": rows[0]["updated_at"],
        "prompt_tokens": 0,
        "cached_tokens": 0,
        "completion_tokens": 0,
        "good_votes": 0,
        "bad_votes": 0,
    }


@pytest.mark.parametrize("since", ["yesterday", "3w", "2025-13-01"])
def test_a_since_that_is_no_time_is_a_usage_error(since, tmp_path):
    result = run_cli("threads", "--since", since, cwd=tmp_path)
    assert result.returncode == 2
    assert f"not a time: {since!r}" in result.stderr.decode()


@pytest.mark.parametrize("since", ["380000d", "0999-01-01", "0001-01-01T00:00:00Z"])
def test_a_since_centuries_ago_lists_every_thread(since, store_url, tmp_path):
    fill(store_url)
    assert listed(store_url, "--since", since, cwd=tmp_path) == [str(NEWER), str(NEW), str(OLD)]


@pytest.mark.parametrize(
    ("since", "message"),
    [
        ("1000000d", "too long ago: '1000000d', that is before year 1"),
        ("99999999999999999999d", "too long ago"),
        ("0001-01-01T00:00:00+01:00", "out of range: '0001-01-01T00:00:00+01:00' is outside"),
        ("9999-12-31T23:00:00-05:00", "out of range"),
    ],
)
def test_a_since_outside_the_years_the_store_keeps_is_a_usage_error(since, message, tmp_path):
    result = run_cli("threads", "--since", since, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr.decode()
    assert "Traceback" not in result.stderr.decode()
